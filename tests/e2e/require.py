"""What a test needs from the machine (a client tool, moto_server, a kernel feature), and
what happens when it is missing: locally the test skips (a developer's machine may lack
s3fs), in CI (environment CI=true, which .ci/run sets) it FAILS, naming what installs it.
CI runs scripts/test.sh, which runs scripts/deps.sh --test first, so a tool that is missing
there is a broken setup, never a reason to report green.

  IN_CI                       CI=true (or 1/yes) in the environment
  missing(what, how)          skip locally, fail in CI: "`what` ... `how`"
  require_tool(name, ...)     the path of an executable, or missing()
  moto_server()               the path of moto_server, or missing()

This module imports nothing from conftest.py or upstream.py (both import it).
"""
import os
import pathlib
import shutil
import sys

import pytest

IN_CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")

DEPS = "scripts/deps.sh --test"


def missing(what, how=f"{DEPS} installs it"):
    """Skips the running test, or fails it when IN_CI. Never returns."""
    if IN_CI:
        pytest.fail(f"{what}: CI=true, so a missing requirement fails the test instead of "
                    f"skipping it ({how})", pytrace=False)
    pytest.skip(f"{what} ({how}; with CI=true this fails)")


def require_tool(name, path=None, package=None, how=None):
    """The executable `path` (or `name` looked up on PATH): skips the test when it is not
    there, fails it in CI. `package` names the Debian package for the message, `how`
    replaces the message's whole hint."""
    found = path if path else shutil.which(name)
    if found and os.path.isfile(found) and os.access(found, os.X_OK):
        return found
    where = path or f"{name} on PATH"
    if how is None:
        how = f"{DEPS} installs it" + (f": Debian's {package}" if package else "")
    missing(f"{where} is not an executable", how)
    return None  # not reached


def moto_server():
    """moto_server, the upstream S3 store of the write-back and read-through tests. It is a
    console script of the Python that has moto (pyenv's here: the machine has no PyPI, and
    Debian has no moto package), so it is taken from STRATA_MOTO_SERVER (what CMake found
    next to e2e_new's interpreter; e2e_debian's /usr/bin/python3 has no moto of its own),
    else from next to the running interpreter, else from PATH."""
    how = ("it comes with the Python that has moto (pip install 'moto[server]'); CI's "
           "e2e_new interpreter is pyenv's, which has it")
    named = os.environ.get("STRATA_MOTO_SERVER")
    if named:
        return require_tool("moto_server", path=named, how=f"STRATA_MOTO_SERVER; {how}")
    own = pathlib.Path(sys.executable).parent / "moto_server"
    if own.is_file() and os.access(own, os.X_OK):
        return str(own)
    found = shutil.which("moto_server")
    if found:
        return found
    missing("moto_server is neither next to this interpreter "
            f"({sys.executable}) nor on PATH, and STRATA_MOTO_SERVER is not set", how)
    return None  # not reached
