"""Runs pytest under whichever interpreter ctest chose.

The interpreter's own packages (boto3, botocore, requests) must win, and pytest may come
from Debian's dist-packages (the pyenv Python has no pytest), so that directory is added at
the END of sys.path. A run that collects no tests, or passes none (everything skipped),
is a failure: a broken harness must not look green.
"""
import sys

sys.path.append("/usr/lib/python3/dist-packages")

import pytest  # noqa: E402


class _Outcomes:
    def __init__(self):
        self.passed = 0

    def pytest_runtest_logreport(self, report):
        if report.when == "call" and report.passed:
            self.passed += 1


def main(argv):
    outcomes = _Outcomes()
    rc = int(pytest.main(argv, plugins=[outcomes]))
    if rc == int(pytest.ExitCode.NO_TESTS_COLLECTED):
        print("run_pytest: no tests were collected; counting that as a failure", file=sys.stderr)
        return 1
    collect_only = any(a in ("--collect-only", "--co") for a in argv)
    if rc == 0 and outcomes.passed == 0 and not collect_only:
        print("run_pytest: every test was skipped; counting that as a failure", file=sys.stderr)
        return 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
