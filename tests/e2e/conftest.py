"""End-to-end harness: runs the real `strata` binary on a free loopback port.

Environment (set by tests/e2e/CMakeLists.txt):
  STRATA_BIN        path of the strata binary (required)
  STRATA_ADMIN_BIN  path of strata-admin (test_admin.py)

Servers are started from a copy of conf/strata.toml (the embedded default) with listen on
a free port, data_dir and every local tier in a temporary directory, fsync on. Stopping a
server sends SIGTERM and requires exit code 0 within a few seconds: graceful shutdown is
part of what every test checks.

Markers:
  boto3            added automatically to tests that use a boto3 fixture (but for the
                   upstream ones); the Debian interpreter's run (e2e_debian) selects these.
  needs_new_boto3  needs boto3 >= 1.36 (flexible checksums, aws-chunked trailers);
                   skipped with older boto3 (a property of the interpreter, not a
                   missing tool: e2e_debian runs Debian's boto3 1.26 on purpose).
  big              moves gigabytes; only in the e2e_new run.
  upstream         needs moto_server as the upstream S3 store (upstream.py; added to every
                   test that uses the `upstream` fixture). They check server-side behaviour
                   (write-back, read-through), where one client generation is enough, so
                   they get no automatic boto3 marker: e2e_debian runs only those marked
                   boto3 explicitly, with the moto_server CMake found (STRATA_MOTO_SERVER).

Missing tools (require.py): a test whose client (rclone, s3fs, s3cmd, the aws CLI),
moto_server or kernel feature (io_uring) is missing skips locally and FAILS with CI=true
(.ci/run sets it); scripts/deps.sh --test installs the tools.
"""
import contextlib
import hashlib
import inspect
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
import tomllib
import uuid

import pytest
import requests

import require
import s3sign

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEFAULT_CONF = REPO / "conf" / "strata.toml"

# The bootstrap admin of conf/strata.toml, and a second, non-admin user every test server has.
ADMIN_AK, ADMIN_SK = "strata", "strata-secret-key"
OTHER_AK, OTHER_SK = "e2e-other-user", "e2e-other-secret-0123456789"
REGION = "us-east-1"

START_TIMEOUT = 60.0   # an Asan build on two shared cores starts slowly
STOP_TIMEOUT = 15.0    # shutdown_grace below is 5s; the rest is slack for Asan's exit


def _version_tuple(text):
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


try:
    import boto3
    import botocore
    import botocore.config
    BOTO3_VERSION = _version_tuple(boto3.__version__)
except ImportError:  # pragma: no cover - every supported interpreter has boto3
    boto3 = None
    BOTO3_VERSION = (0, 0, 0)
NEW_BOTO3 = BOTO3_VERSION >= (1, 36, 0)

# Fixtures and helpers that make a test depend on boto3.
BOTO3_FIXTURES = {"s3", "s3_other", "client_factory", "bucket", "presign", "presign_factory"}
BOTO3_HELPERS = ("make_client(", "presign_url(", "raises_s3(")


def _uses_boto3(item) -> bool:
    if BOTO3_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    fn = getattr(item, "function", None)
    try:
        src = inspect.getsource(fn) if fn else ""
    except (OSError, TypeError):
        src = ""
    return any(h in src for h in BOTO3_HELPERS)


def pytest_configure(config):
    config.addinivalue_line("markers", "boto3: uses boto3 (selected by the e2e_debian run)")
    config.addinivalue_line("markers", "needs_new_boto3: needs boto3 >= 1.36")
    config.addinivalue_line("markers", "big: moves gigabytes (e2e_new only)")
    config.addinivalue_line("markers", "upstream: needs moto_server (e2e_new, and "
                                       "e2e_debian where marked boto3 too)")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    skip_old = pytest.mark.skip(
        reason=f"needs boto3 >= 1.36 (flexible checksums); this interpreter has boto3 "
               f"{'.'.join(map(str, BOTO3_VERSION))}")
    for item in items:
        if "upstream" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.upstream)
        # The upstream tests check server-side behaviour (write-back, read-through); one
        # client generation is enough, so they get no automatic boto3 marker and e2e_debian
        # does not select them. One marked boto3 explicitly (test_repair.py) runs there
        # too, with the moto_server CMake found (STRATA_MOTO_SERVER).
        if _uses_boto3(item) and not item.get_closest_marker("upstream"):
            item.add_marker(pytest.mark.boto3)
        if item.get_closest_marker("needs_new_boto3") and not NEW_BOTO3:
            item.add_marker(skip_old)


def pytest_unconfigure(config):
    """Repeats each failure's name and the end of its traceback as the run's last lines.

    CI keeps only the head and the tail of a long log, and pytest reports failures in the
    middle, where they are cut; unconfigure runs after every summary has been printed.
    """
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    failed = reporter.stats.get("failed", []) + reporter.stats.get("error", [])
    for report in failed:
        reporter.write_line(f"FAILED {report.nodeid} ({report.when})")
        for line in str(report.longrepr).splitlines()[-10:]:
            reporter.write_line(f"    {line[:200]}")


# ---------------------------------------------------------------------------------------
# Configuration files


def _toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # JSON string escapes are valid TOML basic-string escapes
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v)} to TOML")


def dump_toml(cfg: dict) -> str:
    out = []
    for k, v in cfg.items():
        if not isinstance(v, (dict, list)) or (isinstance(v, list) and not
                                               all(isinstance(x, dict) for x in v)):
            out.append(f"{k} = {_toml_value(v)}")
    for k, v in cfg.items():
        if isinstance(v, dict):
            out.append(f"\n[{k}]")
            out.extend(f"{kk} = {_toml_value(vv)}" for kk, vv in v.items())
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            for entry in v:
                out.append(f"\n[[{k}]]")
                out.extend(f"{kk} = {_toml_value(vv)}" for kk, vv in entry.items())
    return "\n".join(out) + "\n"


def _merge(base: dict, overrides: dict) -> dict:
    for k, v in overrides.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            _merge(base[k], v)
        elif v is None:
            base.pop(k, None)
        else:
            base[k] = v
    return base


def test_config(workdir: pathlib.Path, port: int, overrides: dict = None) -> dict:
    """The default configuration adapted to a test: loopback port, temp dirs, fsync on."""
    cfg = tomllib.loads(DEFAULT_CONF.read_text())
    data_dir = workdir / "data"
    cfg["server"].update({
        "listen": f"127.0.0.1:{port}",
        "data_dir": str(data_dir),
        "fsync": True,
        "shutdown_grace": "5s",
        "log_level": "info",
    })
    for tier in cfg.get("tiers", []):
        if tier.get("kind") == "local":
            tier["path"] = str(data_dir / tier["name"])
    cfg["users"].append({"access_key": OTHER_AK, "secret_key": OTHER_SK, "admin": False})
    cfg = _merge(cfg, overrides or {})
    # Overrides replace the whole tiers list; a local tier given without a path gets the
    # same temporary one as above (upstream.cold_config relies on this).
    for tier in cfg.get("tiers", []):
        if tier.get("kind") == "local" and "path" not in tier:
            tier["path"] = str(data_dir / tier["name"])
    return cfg


test_config.__test__ = False  # not a test, despite the name


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def strata_bin() -> str:
    path = os.environ.get("STRATA_BIN")
    if not path:
        pytest.fail("STRATA_BIN is not set: run the e2e tests through ctest "
                    "(or export STRATA_BIN=build/asan/bin/strata)")
    if not os.access(path, os.X_OK):
        pytest.fail(f"STRATA_BIN={path} is not an executable file")
    return path


def admin_bin() -> str:
    path = os.environ.get("STRATA_ADMIN_BIN")
    if not path:
        pytest.fail("STRATA_ADMIN_BIN is not set: run the e2e tests through ctest")
    if not os.access(path, os.X_OK):
        pytest.fail(f"STRATA_ADMIN_BIN={path} is not an executable file")
    return path


def run_admin(config_path, *args, timeout=120):
    """`strata-admin --config CONFIG ARGS...`, its output captured, its stdin closed (so
    a prompt cannot hang a test)."""
    return subprocess.run([admin_bin(), "--config", str(config_path), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def admin(srv, *args, timeout=120):
    """strata-admin ARGS... against the server `srv`: what it printed; the test fails when
    it exits non-zero."""
    res = run_admin(srv.config_path, *args, timeout=timeout)
    if res.returncode != 0:
        pytest.fail(f"strata-admin {' '.join(map(str, args))} exited {res.returncode}\n"
                    f"stdout:\n{res.stdout}\nstderr:\n{res.stderr}")
    return res.stdout


# ---------------------------------------------------------------------------------------
# The server process


class StrataServer:
    """One strata process with its own config file, data directory and log files."""

    def __init__(self, workdir: pathlib.Path, overrides: dict = None, config_text: str = None):
        self.workdir = pathlib.Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.config = test_config(self.workdir, self.port, overrides)
        self.tls = bool(self.config["server"].get("tls_cert"))
        self.scheme = "https" if self.tls else "http"
        self.host = "127.0.0.1"
        self.endpoint = f"{self.scheme}://{self.host}:{self.port}"
        self.region = self.config["server"].get("region", REGION)
        self.access_key, self.secret_key = ADMIN_AK, ADMIN_SK
        self.ca_file = self.config["server"].get("tls_cert")
        self.config_path = self.workdir / "strata.toml"
        self.config_path.write_text(config_text if config_text is not None
                                    else dump_toml(self.config))
        self.proc = None
        self.starts = 0

    @property
    def netloc(self):
        return f"{self.host}:{self.port}"

    def _log_paths(self):
        return (self.workdir / f"strata.{self.starts}.stdout",
                self.workdir / f"strata.{self.starts}.stderr")

    def logs(self) -> str:
        """Everything every run of this server wrote to stdout and stderr."""
        parts = []
        for p in sorted(self.workdir.glob("strata.*.std*")):
            parts.append(f"--- {p.name}\n" + p.read_text(errors="replace"))
        return "\n".join(parts)

    def start(self, extra_args=(), wait=True):
        assert self.proc is None or self.proc.poll() is not None, "already running"
        self.starts += 1
        out_path, err_path = self._log_paths()
        env = dict(os.environ)
        # ASan keeps freed blocks in a quarantine (256 MiB by default) to catch use after
        # free; that memory would count in the server's RSS, and the tests that bound RSS
        # measure the server, so the quarantine is kept at 32 MiB.
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0:quarantine_size_mb=32")
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            self.proc = subprocess.Popen(
                [strata_bin(), "--config", str(self.config_path), *extra_args],
                stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=self.workdir, env=env)
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self, timeout=START_TIMEOUT):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rc = self.proc.poll()
            if rc is not None:
                pytest.fail(f"strata exited with {rc} before listening on {self.netloc}\n"
                            f"{self.logs()}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        self.proc.kill()
        self.proc.wait()
        pytest.fail(f"strata did not listen on {self.netloc} within {timeout}s\n{self.logs()}")

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def send_signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self, sig=signal.SIGTERM, timeout=STOP_TIMEOUT, expect_rc=0):
        """Signals the server and waits; fails the test unless it exits with expect_rc."""
        if self.proc is None or self.proc.poll() is not None:
            rc = None if self.proc is None else self.proc.returncode
        else:
            self.proc.send_signal(sig)
            try:
                rc = self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                pytest.fail(f"strata did not exit within {timeout}s of {signal.Signals(sig).name}"
                            f"\n{self.logs()}")
        if expect_rc is not None and rc != expect_rc:
            pytest.fail(f"strata exited with {rc}, expected {expect_rc}\n{self.logs()}")
        return rc

    def wait_exit(self, timeout=STOP_TIMEOUT):
        """Waits for an exit already under way (after signal()); returns the exit code."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail(f"strata did not exit within {timeout}s\n{self.logs()}")

    def kill(self):
        """SIGKILL: a crash. Returns once the process is gone."""
        if self.running():
            self.proc.kill()
            self.proc.wait()

    def restart(self):
        self.stop()
        self.start()
        return self


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """The shared server for tests that neither stop it nor change its configuration."""
    srv = StrataServer(tmp_path_factory.mktemp("server")).start()
    yield srv
    srv.stop()


@pytest.fixture
def strata_factory(tmp_path):
    """Makes function-scoped servers: strata_factory(overrides={...}, start=True).
    At the end, any still running is stopped with SIGTERM and must exit 0."""
    made = []

    def make(overrides=None, start=True, config_text=None, name=None):
        srv = StrataServer(tmp_path / (name or f"srv{len(made)}"), overrides, config_text)
        made.append(srv)
        if start:
            srv.start()
        return srv

    yield make
    for srv in made:
        if srv.running():
            srv.stop()


# ---------------------------------------------------------------------------------------
# boto3 clients


def self_signed_cert(directory):
    """(cert.pem, key.pem) under `directory`: a self-signed certificate for 127.0.0.1 (and
    localhost), valid two days."""
    key, crt = pathlib.Path(directory) / "key.pem", pathlib.Path(directory) / "cert.pem"
    res = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
         "-out", str(crt), "-days", "2", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
        capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return crt, key


def make_client(srv, access_key=None, secret_key=None, signature_version="s3v4", region=None,
                **config_kwargs):
    """A boto3 S3 client for `srv`: path-style, SigV4 (unless asked), at most one retry
    (botocore's max_attempts counts retries; pass retries={"total_max_attempts": 1} for
    none). config_kwargs override any of these botocore Config options."""
    options = dict(signature_version=signature_version, s3={"addressing_style": "path"},
                   retries={"max_attempts": 1, "mode": "standard"},
                   connect_timeout=10, read_timeout=300)
    options.update(config_kwargs)
    cfg = botocore.config.Config(**options)
    return boto3.session.Session().client(
        "s3",
        endpoint_url=srv.endpoint,
        aws_access_key_id=access_key or srv.access_key,
        aws_secret_access_key=secret_key or srv.secret_key,
        region_name=region or srv.region,
        config=cfg,
        verify=srv.ca_file if srv.tls else None)


@pytest.fixture
def client_factory():
    return make_client


@pytest.fixture(scope="session")
def s3(server):
    return make_client(server)


@pytest.fixture(scope="session")
def s3_other(server):
    return make_client(server, OTHER_AK, OTHER_SK)


def unique_bucket(prefix="e2e") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def empty_and_delete(client, bucket):
    """Deletes every version, delete marker and upload of `bucket`, then the bucket."""
    with contextlib.suppress(Exception):
        kw = {"Bucket": bucket}
        while True:
            page = client.list_object_versions(**kw)
            for v in page.get("Versions", []) + page.get("DeleteMarkers", []):
                client.delete_object(Bucket=bucket, Key=v["Key"], VersionId=v["VersionId"])
            if not page.get("IsTruncated"):
                break
            kw = {"Bucket": bucket, "KeyMarker": page["NextKeyMarker"],
                  "VersionIdMarker": page.get("NextVersionIdMarker", "")}
    with contextlib.suppress(Exception):
        client.delete_bucket(Bucket=bucket)


@pytest.fixture
def bucket(s3):
    """A fresh bucket on the session server, emptied and deleted afterwards."""
    name = unique_bucket()
    s3.create_bucket(Bucket=name)
    yield name
    empty_and_delete(s3, name)


def error_code(exc) -> str:
    return exc.response.get("Error", {}).get("Code", "")


def http_status(exc) -> int:
    return exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)


def admin_scrape(srv, path="/_strata/metrics", timeout=10):
    """GET srv's metrics as its admin user sees them (every series, those per bucket too):
    the request SigV4-signed by the admin, as strata-admin signs. Returns the response."""
    signer = s3sign.SigV4(srv.access_key, srv.secret_key, srv.region)
    headers = {"host": srv.netloc, "x-amz-date": s3sign.amz_now(),
               "x-amz-content-sha256": s3sign.EMPTY_SHA256}
    headers["authorization"] = signer.authorization("GET", path, [], headers,
                                                    s3sign.EMPTY_SHA256)
    return requests.get(srv.endpoint + path, headers=headers, timeout=timeout,
                        verify=srv.ca_file if srv.tls else None)


def metric(srv, name, **labels):
    """The value of the sample `name` on srv's metrics, scraped as its admin (admin_scrape),
    whose labels include `labels` (the first such sample), or None when there is none."""
    resp = admin_scrape(srv)
    assert resp.status_code == 200, resp.text
    text = resp.text
    for line in text.splitlines():
        m = re.match(r"^(\w+)(?:\{([^}]*)\})? (\S+)$", line)
        if not m or m.group(1) != name:
            continue
        have = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
        if all(have.get(k) == str(v) for k, v in labels.items()):
            return float(m.group(3))
    return None


def xml_code(body) -> str:
    """The <Code> of an S3 error document, or ''."""
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    m = re.search(r"<Code>([^<]*)</Code>", body or "")
    return m.group(1) if m else ""


@contextlib.contextmanager
def raises_s3(code, status):
    """Expects a botocore ClientError with this S3 <Code> and HTTP status."""
    with pytest.raises(botocore.exceptions.ClientError) as info:
        yield info
    got_code, got_status = error_code(info.value), http_status(info.value)
    assert (got_code, got_status) == (code, status), info.value.response


# ---------------------------------------------------------------------------------------
# Presigned URLs


def presign_url(srv, method, bucket, key=None, expires=300, signature_version="s3v4",
                access_key=None, secret_key=None, params=None):
    """A presigned URL for GET/PUT/HEAD/DELETE of bucket[/key]. signature_version 's3'
    gives SigV2 (AWSAccessKeyId/Expires/Signature), 's3v4' SigV4 (X-Amz-*)."""
    client = make_client(srv, access_key, secret_key, signature_version=signature_version)
    op = {
        ("GET", True): "get_object", ("PUT", True): "put_object",
        ("HEAD", True): "head_object", ("DELETE", True): "delete_object",
        ("GET", False): "list_objects", ("HEAD", False): "head_bucket",
    }[(method, key is not None)]
    p = {"Bucket": bucket}
    if key is not None:
        p["Key"] = key
    p.update(params or {})
    return client.generate_presigned_url(op, Params=p, ExpiresIn=expires, HttpMethod=method)


@pytest.fixture
def presign(server):
    def make(method, bucket, key=None, **kw):
        return presign_url(server, method, bucket, key, **kw)
    return make


@pytest.fixture
def presign_factory():
    return presign_url


# ---------------------------------------------------------------------------------------
# The aws CLI


DEBIAN_AWS = "/usr/bin/aws"  # Debian's awscli (v2), which scripts/deps.sh --test installs


def aws_clis():
    """Every distinct aws CLI to test: the one on PATH (pyenv's v1 here), if any, and
    Debian's /usr/bin/aws (v2) always, so that a missing awscli package is a test that
    skips (fails with CI=true, run_aws), not a parameter that silently disappears."""
    found, seen = [], set()
    for cand in (shutil.which("aws"), DEBIAN_AWS):
        if cand:
            real = os.path.realpath(cand)
            if real not in seen:
                seen.add(real)
                found.append(cand)
    return found


def run_aws(cli, srv, args, tmp_path, timeout=900, access_key=None, secret_key=None,
            check=True, multipart_threshold="5GB", multipart_chunksize="1GB"):
    """Runs `<cli> --endpoint-url <srv> <args>` with credentials in the environment and a
    private config file (path-style). By default multipart starts only above 5GB so `s3 cp`
    does one PUT; pass e.g. multipart_threshold="8MB" to exercise multipart uploads."""
    cfg = pathlib.Path(tmp_path) / "aws-config"
    cfg.write_text("[default]\n"
                   f"region = {srv.region}\n"
                   "s3 =\n"
                   "  addressing_style = path\n"
                   f"  multipart_threshold = {multipart_threshold}\n"
                   f"  multipart_chunksize = {multipart_chunksize}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update({
        "AWS_ACCESS_KEY_ID": access_key or srv.access_key,
        "AWS_SECRET_ACCESS_KEY": secret_key or srv.secret_key,
        "AWS_DEFAULT_REGION": srv.region,
        "AWS_CONFIG_FILE": str(cfg),
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_PAGER": "",
    })
    cli = require.require_tool("aws", path=cli, package="awscli")
    cmd = [cli, "--endpoint-url", srv.endpoint]
    if srv.tls:
        cmd += ["--ca-bundle", srv.ca_file]
    cmd += list(args)
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and res.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} exited {res.returncode}\nstdout:\n{res.stdout}\n"
                    f"stderr:\n{res.stderr}")
    return res


# ---------------------------------------------------------------------------------------
# Raw sockets


class RawResponse:
    def __init__(self, status, reason, headers, body, raw):
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
        self.raw = raw

    @property
    def code(self):
        return xml_code(self.body)

    def __repr__(self):
        return f"RawResponse({self.status} {self.reason}, {self.headers}, {self.body[:500]!r})"


class RawConn:
    """A plain TCP connection that sends exact bytes and parses HTTP/1.1 responses."""

    def __init__(self, srv, timeout=15.0):
        self.sock = socket.create_connection((srv.host, srv.port), timeout=timeout)
        self.buf = b""
        self.eof = False

    def send(self, data: bytes, ignore_reset=True):
        try:
            self.sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            if not ignore_reset:
                raise

    def shutdown_write(self):
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_WR)

    def _fill(self) -> bool:
        if self.eof:
            return False
        try:
            chunk = self.sock.recv(65536)
        except ConnectionResetError:
            chunk = b""
        except socket.timeout:
            raise AssertionError("timed out waiting for the server's response; "
                                 f"got so far: {self.buf[:500]!r}")
        if not chunk:
            self.eof = True
            return False
        self.buf += chunk
        return True

    def read_response(self, head_request=False):
        """The next response, or None if the server closed without sending one."""
        while b"\r\n\r\n" not in self.buf:
            if not self._fill():
                return None
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        status = int(parts[1])
        reason = parts[2] if len(parts) > 2 else ""
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        body = b""
        if head_request or status in (204, 304) or 100 <= status < 200:
            pass
        elif "content-length" in headers:
            n = int(headers["content-length"])
            while len(self.buf) < n and self._fill():
                pass
            body, self.buf = self.buf[:n], self.buf[n:]
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            while True:
                while b"\r\n" not in self.buf:
                    if not self._fill():
                        break
                size_line, _, rest = self.buf.partition(b"\r\n")
                size = int(size_line.split(b";")[0], 16)
                while len(rest) < size + 2 and self._fill():
                    rest = self.buf.partition(b"\r\n")[2]
                body += rest[:size]
                self.buf = rest[size + 2:]
                if size == 0:
                    break
        else:
            while self._fill():
                pass
            body, self.buf = self.buf, b""
        return RawResponse(status, reason, headers, body, head)

    def closed_by_peer(self, wait=5.0) -> bool:
        """True if the server closes the connection within `wait` seconds."""
        self.sock.settimeout(wait)
        try:
            while self._fill():
                pass
            return True
        except AssertionError:
            return False

    def close(self):
        with contextlib.suppress(OSError):
            self.sock.close()


@pytest.fixture
def raw_factory():
    conns = []

    def connect(srv, timeout=15.0):
        c = RawConn(srv, timeout)
        conns.append(c)
        return c

    yield connect
    for c in conns:
        c.close()


def raw_exchange(srv, data: bytes, shutdown_write=False, timeout=15.0):
    """Sends `data` on a new connection and returns the first response (or None)."""
    conn = RawConn(srv, timeout)
    try:
        conn.send(data)
        if shutdown_write:
            conn.shutdown_write()
        return conn.read_response()
    finally:
        conn.close()


# ---------------------------------------------------------------------------------------
# Files


def write_random_file(path, size, block=1 << 20):
    """Writes `size` random bytes to `path` without holding them; returns (sha256, md5)."""
    sha, md5 = hashlib.sha256(), hashlib.md5()
    with open(path, "wb") as f:
        left = size
        while left:
            chunk = os.urandom(min(block, left))
            sha.update(chunk)
            md5.update(chunk)
            f.write(chunk)
            left -= len(chunk)
    return sha.hexdigest(), md5.hexdigest()


def sha256_file(path, block=1 << 20):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            chunk = f.read(block)
            if not chunk:
                return h.hexdigest()
            h.update(chunk)


def sha256_stream(body, block=1 << 20, out_path=None):
    """Hashes a botocore StreamingBody (writing it to out_path if given) chunk by chunk."""
    h, n = hashlib.sha256(), 0
    f = open(out_path, "wb") if out_path else None
    try:
        for chunk in body.iter_chunks(block):
            h.update(chunk)
            n += len(chunk)
            if f:
                f.write(chunk)
    finally:
        if f:
            f.close()
    return h.hexdigest(), n


# Names real datasets have and naive URL or path handling breaks: spaces, non-ASCII
# letters, characters that are special in URLs ('+', '%', '&', '=') and in shells.
AWKWARD_NAMES = ("with space.txt", "ünïcødé-日本語.txt", "emoji-\U0001F600.bin", "a+b=c&d.txt",
                 "percent%20sign.txt", "semi;colon,comma.txt", "(parens) [brackets].txt")


def write_tree(root, rng, small_files=300, mib_files=3):
    """Writes a tree like a small dataset under `root`: `small_files` files of 1..4096
    random bytes in nested directories, empty files, files of a few MiB, and awkward names.
    Returns {relative posix path: sha256}."""
    root = pathlib.Path(root)
    files = {}

    def put(rel, data):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        files[rel] = hashlib.sha256(data).hexdigest()

    for i in range(small_files):
        put(f"shard-{i % 4}/part {i % 7}/sample-{i:04d}.bin", rng.randbytes(rng.randint(1, 4096)))
    for i in range(4):
        put(f"empty/e{i}", b"")
    put("shard-0/part 0/empty file", b"")
    for i in range(mib_files):
        put(f"blobs/blob-{i}.bin", rng.randbytes((i + 1) * 1024 * 1024 + rng.randint(0, 4095)))
    for i, name in enumerate(AWKWARD_NAMES):
        put(f"names/dir with space/{name}", rng.randbytes(100 + i))
        put(f"names/ünï dir/{name}", rng.randbytes(200 + i))
    return files


def tree_digests(root):
    """{relative posix path: sha256} of every regular file under `root`."""
    root = pathlib.Path(root)
    return {p.relative_to(root).as_posix(): sha256_file(p)
            for p in sorted(root.rglob("*")) if p.is_file()}


def listed_sizes(client, bucket, prefix=""):
    """{key: Size} of every object under `prefix`, following continuation tokens."""
    out, token = {}, None
    while True:
        kw = {"Bucket": bucket, "Prefix": prefix}
        if token:
            kw["ContinuationToken"] = token
        page = client.list_objects_v2(**kw)
        out.update((o["Key"], o["Size"]) for o in page.get("Contents", []))
        if not page.get("IsTruncated"):
            return out
        token = page["NextContinuationToken"]


class Background(threading.Thread):
    """Runs fn in a thread and keeps its result or exception."""

    def __init__(self, fn):
        super().__init__(daemon=True)
        self.fn, self.result, self.error = fn, None, None

    def run(self):
        try:
            self.result = self.fn()
        except BaseException as e:  # noqa: BLE001 - reported to the test
            self.error = e


# ---------------------------------------------------------------------------------------
# The upstream S3 store (moto_server behind a proxy): fixtures `upstream` and `cold_strata`

from upstream import cold_strata, upstream  # noqa: E402,F401 - fixtures, found by name
from etcd import etcd  # noqa: E402,F401 - a fixture, found by name
