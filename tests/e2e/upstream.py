"""An upstream S3 store for the write-back and read-through tests: a real moto_server on a
free loopback port, seen by strata through a TCP proxy the test can cut and restore.

  MotoUpstream   `moto_server -H 127.0.0.1 -p PORT`; .client() is boto3 straight to it.
  FlakyProxy     a threaded TCP proxy in front of moto. .stop() closes the listener and
                 resets every open connection (strata sees refused and reset connections:
                 an upstream outage); .start() listens again on the same port. It counts
                 the HTTP request lines strata sends (.count(method, path)).
  Upstream       both together; the `upstream` fixture yields one.
  cold_config    the strata_factory overrides that make the proxy strata's upstream: the
                 default local tiers plus a tier "cold" of kind "s3".

The fixtures `upstream` and `cold_strata` are defined here and imported by conftest.py.
`upstream` finds moto_server (require.moto_server: STRATA_MOTO_SERVER, next to the
interpreter, or on PATH): when there is none the test skips, or fails with CI=true; it
fails when moto_server is there but does not start.

This module imports nothing from conftest.py (conftest imports it).
"""
import contextlib
import ctypes
import http.client
import os
import pathlib
import re
import signal
import socket
import struct
import subprocess
import threading
import time
import tomllib

import pytest

import require

try:
    import boto3
    import botocore.config
    import botocore.exceptions
except ImportError:  # pragma: no cover - every supported interpreter has boto3
    boto3 = None

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_CONF = HERE.parent.parent / "conf" / "strata.toml"

UPSTREAM_AK, UPSTREAM_SK, UPSTREAM_REGION = "testing", "testing", "us-east-1"
MOTO_START_TIMEOUT = 60.0   # moto imports a lot; two shared cores under an Asan build


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent():  # pragma: no cover - runs in the child between fork and exec
    """No moto_server outlives a killed test run (PR_SET_PDEATHSIG survives exec)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


# ---------------------------------------------------------------------------------------
# moto_server


def upstream_client(endpoint, retries, connect_timeout, read_timeout):
    """A boto3 S3 client to `endpoint` with the upstream's credentials, path-style, SigV4."""
    return boto3.session.Session().client(
        "s3", endpoint_url=endpoint, aws_access_key_id=UPSTREAM_AK,
        aws_secret_access_key=UPSTREAM_SK, region_name=UPSTREAM_REGION,
        config=botocore.config.Config(s3={"addressing_style": "path"}, signature_version="s3v4",
                                      retries=retries, connect_timeout=connect_timeout,
                                      read_timeout=read_timeout))


class MotoUpstream:
    """One moto_server process (the executable `exe`) on a free loopback port. Its log goes
    to `logdir`."""

    def __init__(self, logdir, exe):
        self.exe = exe
        self.logdir = pathlib.Path(logdir)
        self.logdir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.logdir / "moto.log"
        self.host = "127.0.0.1"
        self.port = _free_port()
        self.endpoint = f"http://{self.host}:{self.port}"
        self.proc = None

    def log(self, tail=4000) -> str:
        with contextlib.suppress(OSError):
            return self.log_path.read_text(errors="replace")[-tail:]
        return ""

    def start(self, timeout=MOTO_START_TIMEOUT):
        """Starts moto_server and returns once it answers HTTP; RuntimeError otherwise."""
        exe = self.exe
        env = dict(os.environ, AWS_ACCESS_KEY_ID=UPSTREAM_AK,
                   AWS_SECRET_ACCESS_KEY=UPSTREAM_SK, AWS_DEFAULT_REGION=UPSTREAM_REGION)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [exe, "-H", self.host, "-p", str(self.port)], stdout=log,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                preexec_fn=_die_with_parent)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rc = self.proc.poll()
            if rc is not None:
                raise RuntimeError(f"moto_server exited with {rc} before answering on "
                                   f"{self.endpoint}\n{self.log()}")
            if self._answers():
                return self
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"moto_server did not answer on {self.endpoint} within {timeout}s\n"
                           f"{self.log()}")

    def _answers(self) -> bool:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=2)
        try:
            conn.request("GET", "/")
            conn.getresponse().read()
            return True   # any HTTP answer (ListBuckets) will do
        except (OSError, http.client.HTTPException):
            return False
        finally:
            conn.close()

    def client(self):
        """boto3 S3 client straight to moto (path-style, SigV4, a few retries)."""
        return upstream_client(self.endpoint, {"max_attempts": 3, "mode": "standard"},
                               connect_timeout=10, read_timeout=120)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# ---------------------------------------------------------------------------------------
# The proxy


class _Pair:
    """One proxied connection: strata's socket and the one to moto."""

    def __init__(self, client, server):
        self.client, self.server = client, server
        self.pumps_done = 0

    def abort(self):
        """Resets both sides: SO_LINGER 0 makes the close that follows send RST, and the
        shutdown wakes the pump threads blocked in recv/sendall (they close the sockets)."""
        for s in (self.client, self.server):
            with contextlib.suppress(OSError):
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def close(self):
        for s in (self.client, self.server):
            with contextlib.suppress(OSError):
                s.close()


class FlakyProxy:
    """A TCP proxy on a free loopback port in front of (host, target_port).

    Request counting is a heuristic, not an HTTP parser: every client->upstream byte is
    split into lines and each line that matches
        ^(GET|PUT|HEAD|POST|DELETE) (\\S+) HTTP/1\\.1\\r?$
    counts as one request (method, request target). That sees every request on a
    keep-alive connection, including request lines split across reads (the unfinished
    last line of a read is carried into the next; a line longer than 64 KiB is dropped).
    A request body that happens to contain such a line at a line start would be counted
    too; the tests' bodies are random bytes or short text, so that does not happen.
    Responses (upstream->client) are not inspected."""

    REQUEST_LINE = re.compile(rb"^(GET|PUT|HEAD|POST|DELETE) (\S+) HTTP/1\.1\r?$")
    MAX_CARRY = 64 * 1024

    def __init__(self, target_port, target_host="127.0.0.1"):
        self.target = (target_host, target_port)
        self.host = "127.0.0.1"
        self.port = _free_port()
        self.endpoint = f"http://{self.host}:{self.port}"
        self._lock = threading.Lock()
        self._pairs = set()
        self._threads = []
        self._requests = []          # (method, target) in the order they were seen
        self._listener = None
        self._accepting = None       # the accept thread of the current listener
        self._stopping = None
        self.start()

    # -- control ---------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._listener is not None

    def start(self, timeout=10.0):
        """Listens (again) on the same port."""
        if self._listener is not None:
            return self
        deadline = time.monotonic() + timeout
        while True:
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                listener.bind((self.host, self.port))
                break
            except OSError:
                listener.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        listener.listen(128)
        listener.settimeout(0.1)   # the accept loop polls its stop flag
        self._listener = listener
        self._stopping = threading.Event()
        self._accepting = threading.Thread(target=self._accept_loop,
                                           args=(listener, self._stopping),
                                           name=f"proxy-accept-{self.port}", daemon=True)
        self._accepting.start()
        return self

    def stop(self):
        """An outage: the port refuses connections and every open one is reset."""
        if self._listener is None:
            return self
        self._stopping.set()
        self._accepting.join()
        self._listener.close()
        self._listener = None
        with self._lock:
            pairs = list(self._pairs)
            threads = list(self._threads)
        for pair in pairs:
            pair.abort()
        for t in threads:
            t.join(timeout=10)
        return self

    close = stop

    # -- counting --------------------------------------------------------------------

    def requests(self):
        """Every (method, request target) seen so far, in order."""
        with self._lock:
            return list(self._requests)

    def count(self, method, path_prefix="/", exact=False):
        """How many requests with this method had a target starting with path_prefix;
        exact=True: whose path (the target without its ?query) is exactly path_prefix."""
        method = method.upper()
        n = 0
        for m, target in self.requests():
            if m != method:
                continue
            if exact:
                n += target.split("?", 1)[0] == path_prefix
            else:
                n += target.startswith(path_prefix)
        return n

    def reset_counts(self):
        with self._lock:
            self._requests.clear()

    # -- the pumps -------------------------------------------------------------------

    def _accept_loop(self, listener, stopping):
        while not stopping.is_set():
            try:
                client, _ = listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            client.settimeout(None)
            try:
                server = socket.create_connection(self.target, timeout=10)
                server.settimeout(None)
            except OSError:
                # moto itself is down: pass the failure on as a reset.
                _Pair(client, client).abort()
                client.close()
                continue
            pair = _Pair(client, server)
            up = threading.Thread(target=self._pump, args=(pair, client, server, True),
                                  daemon=True)
            down = threading.Thread(target=self._pump, args=(pair, server, client, False),
                                    daemon=True)
            with self._lock:
                self._threads = [t for t in self._threads if t.is_alive()]
                self._pairs.add(pair)
                self._threads += [up, down]
            up.start()
            down.start()
            if stopping.is_set():  # stop() may have taken its snapshot before the add
                pair.abort()

    def _pump(self, pair, src, dst, sniff):
        carry, skip_first = b"", False
        try:
            while True:
                data = src.recv(256 * 1024)
                if not data:
                    break
                if sniff:
                    carry, skip_first = self._sniff(carry + data, skip_first)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)   # pass the EOF on
            with self._lock:
                pair.pumps_done += 1
                last = pair.pumps_done == 2
                if last:
                    self._pairs.discard(pair)
            if last:
                pair.close()

    def _sniff(self, buf, skip_first):
        lines = buf.split(b"\n")
        carry = lines.pop()            # the unfinished last line
        found = []
        for i, line in enumerate(lines):
            if i == 0 and skip_first:
                continue               # the tail of a line that was too long to keep
            m = self.REQUEST_LINE.match(line)
            if m:
                found.append((m.group(1).decode(), m.group(2).decode("latin-1")))
        if lines:
            skip_first = False
        if len(carry) > self.MAX_CARRY:
            carry, skip_first = b"", True
        if found:
            with self._lock:
                self._requests.extend(found)
        return carry, skip_first


# ---------------------------------------------------------------------------------------
# Both together, and strata's configuration for them


class Upstream:
    """moto_server, the proxy in front of it, and a boto3 client straight to moto."""

    def __init__(self, workdir, moto_server):
        self.moto = MotoUpstream(workdir, moto_server)
        self.moto.start()
        try:
            self.proxy = FlakyProxy(self.moto.port)
        except Exception:
            self.moto.stop()
            raise
        self.client = self.moto.client()          # bypasses the proxy
        self.endpoint = self.proxy.endpoint       # what strata is configured with

    def proxy_client(self):
        """boto3 through the proxy (what strata sees), with no retries."""
        return upstream_client(self.endpoint, {"total_max_attempts": 1, "mode": "standard"},
                               connect_timeout=5, read_timeout=60)

    def get(self, bucket, key):
        """(body bytes, get_object response) straight from moto, or None when absent."""
        try:
            resp = self.client.get_object(Bucket=bucket, Key=key)
        except botocore.exceptions.ClientError as e:
            if e.response.get("Error", {}).get("Code") in ("NoSuchKey", "404", "NoSuchBucket"):
                return None
            raise
        return resp["Body"].read(), resp

    def body(self, bucket, key):
        got = self.get(bucket, key)
        return None if got is None else got[0]

    def keys(self, bucket):
        """Every key of the upstream bucket, straight from moto."""
        out, kw = [], {"Bucket": bucket}
        while True:
            page = self.client.list_objects_v2(**kw)
            out += [o["Key"] for o in page.get("Contents", [])]
            if not page.get("IsTruncated"):
                return out
            kw["ContinuationToken"] = page["NextContinuationToken"]

    def close(self):
        self.proxy.stop()
        self.moto.stop()


def cold_config(upstream, delay="1s", tier=None, **writeback):
    """strata_factory overrides: the default tiers (local, paths filled in by conftest's
    test_config) plus a tier "cold" of kind "s3" at the proxy, and [writeback] delay plus
    any other [writeback] keys given (dirty_limit="1MiB", ...). `tier` adds keys to the
    cold tier's table (revalidate_after="2s", ...)."""
    default = tomllib.loads(DEFAULT_CONF.read_text())
    tiers = [{k: v for k, v in t.items() if k != "path"} for t in default["tiers"]
             if t.get("kind") == "local"]
    cold = {"name": "cold", "kind": "s3", "endpoint": upstream.endpoint,
            "access_key": UPSTREAM_AK, "secret_key": UPSTREAM_SK, "region": UPSTREAM_REGION}
    cold.update(tier or {})
    return {"tiers": tiers + [cold], "writeback": {"delay": delay, **writeback}}


def wait_until(predicate, timeout=30.0, what="the condition", interval=0.1, srv=None):
    """Polls predicate() until it returns something true and returns that; on timeout
    fails with `what` (a string, or a callable giving one) and the tail of srv's logs."""
    deadline = time.monotonic() + timeout
    while True:
        got = predicate()
        if got:
            return got
        if time.monotonic() > deadline:
            text = what() if callable(what) else what
            logs = f"\n--- strata logs (tail)\n{srv.logs()[-6000:]}" if srv is not None else ""
            pytest.fail(f"timed out after {timeout}s waiting for {text}{logs}")
        time.sleep(interval)


# ---------------------------------------------------------------------------------------
# Fixtures (imported by conftest.py)


@pytest.fixture
def upstream(tmp_path):
    """A fresh moto_server and proxy for one test; stopped afterwards."""
    exe = require.moto_server()  # skips, or fails with CI=true, when there is none
    try:
        up = Upstream(tmp_path / "upstream", exe)
    except Exception as e:  # noqa: BLE001 - a moto that does not start fails the test
        pytest.fail(f"could not start the upstream: {e}")
    yield up
    up.close()


@pytest.fixture
def cold_strata(upstream, strata_factory):
    """Makes strata servers whose upstream is `upstream`'s proxy:
    cold_strata(delay="1s", tier={...}, start=True, name=None, **writeback_keys).
    `upstream` is set up before strata_factory, so every server is stopped (and must exit
    0) before moto and the proxy go away."""
    def make(delay="1s", tier=None, start=True, name=None, **writeback):
        return strata_factory(cold_config(upstream, delay, tier, **writeback), start=start,
                              name=name)
    return make
