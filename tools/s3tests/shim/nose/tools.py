# Not part of s3-tests: its utils.py imports nose.tools.eq_ only, and Debian 12's Python
# has no nose.
def eq_(a, b, msg=None):
    assert a == b, msg or "%r != %r" % (a, b)
