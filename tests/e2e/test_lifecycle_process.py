"""The process: graceful shutdown with uploads in flight, crash durability of acknowledged
writes, and startup refusing bad configurations with a message naming the key."""
import hashlib
import os
import signal
import subprocess
import time

import pytest

import s3sign
from conftest import (ADMIN_AK, ADMIN_SK, DEFAULT_CONF, RawConn, make_client, raises_s3,
                      strata_bin)


def run_strata_expecting_failure(args, cwd, timeout=30):
    res = subprocess.run([strata_bin(), *args], capture_output=True, text=True, timeout=timeout,
                         cwd=cwd, stdin=subprocess.DEVNULL)
    return res.returncode, res.stdout + res.stderr


def test_unknown_config_key_exits_nonzero_naming_it(tmp_path):
    text = DEFAULT_CONF.read_text().replace('listen = "127.0.0.1:9000"',
                                            'listn = "127.0.0.1:9000"')
    assert "listn" in text
    cfg = tmp_path / "bad.toml"
    cfg.write_text(text)
    rc, out = run_strata_expecting_failure(["--config", str(cfg)], tmp_path)
    assert rc != 0, out
    assert "server.listn" in out, out


@pytest.mark.parametrize("snippet,key", [
    ('[server]\nthreads = -1\n', "server.threads"),
    ('[server]\nlisten = "127.0.0.1:70000"\n', "server.listen"),
    ('[[tiers]]\nname = "hot"\nkind = "tape"\npath = "/x"\n', "tiers[0].kind"),
    ('[[users]]\naccess_key = "a"\nsecret_key = "b"\nrole = "x"\n', "users[0].role"),
    ('[writeback]\ndelay = "soon"\n', "writeback.delay"),
    ('[server\n', "bad.toml:1:"),
])
def test_bad_config_values_exit_nonzero_naming_the_key(tmp_path, snippet, key):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(snippet)
    rc, out = run_strata_expecting_failure(["--config", str(cfg)], tmp_path)
    assert rc != 0, out
    assert key in out, out


def test_missing_config_file(tmp_path):
    missing = tmp_path / "does-not-exist.toml"
    rc, out = run_strata_expecting_failure(["--config", str(missing)], tmp_path)
    assert rc != 0, out
    assert str(missing) in out, out


def test_sigterm_idle_exits_zero(strata_factory):
    srv = strata_factory()
    make_client(srv).list_buckets()
    started = time.monotonic()
    srv.stop(signal.SIGTERM)
    assert time.monotonic() - started < 10


def test_sigint_exits_zero(strata_factory):
    srv = strata_factory()
    make_client(srv).list_buckets()
    srv.stop(signal.SIGINT)


def test_data_survives_restart(strata_factory):
    srv = strata_factory()
    s3 = make_client(srv)
    s3.create_bucket(Bucket="persist")
    s3.put_object(Bucket="persist", Key="k", Body=b"still here", Metadata={"a": "b"})
    srv.restart()
    s3 = make_client(srv)
    got = s3.get_object(Bucket="persist", Key="k")
    assert got["Body"].read() == b"still here"
    assert got["Metadata"] == {"a": "b"}
    assert "persist" in [b["Name"] for b in s3.list_buckets()["Buckets"]]


def test_acknowledged_write_survives_sigkill(strata_factory):
    # fsync is on: a 200 means the object is on disk, whatever happens next.
    srv = strata_factory()
    s3 = make_client(srv)
    s3.create_bucket(Bucket="crash")
    body = os.urandom(3 * 1024 * 1024)
    s3.put_object(Bucket="crash", Key="acked", Body=body)
    s3.put_object(Bucket="crash", Key="deleted", Body=b"gone")
    s3.delete_object(Bucket="crash", Key="deleted")
    srv.kill()
    srv.start()
    s3 = make_client(srv)
    assert s3.get_object(Bucket="crash", Key="acked")["Body"].read() == body
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket="crash", Key="deleted")


def _start_upload(srv, bucket, key, size):
    """Sends the header and half of a signed PUT; returns (conn, rest of body, full body)."""
    body = os.urandom(size)
    signer = s3sign.SigV4(ADMIN_AK, ADMIN_SK, srv.region)
    req = s3sign.signed_request_bytes(signer, "PUT", srv.netloc, f"/{bucket}/{key}", body=body)
    head_len = len(req) - len(body)
    conn = RawConn(srv, timeout=30)
    conn.send(req[: head_len + size // 2])
    return conn, req[head_len + size // 2:], body


def test_sigterm_during_upload_finishes_it_or_fails_it_cleanly(strata_factory):
    srv = strata_factory()
    s3 = make_client(srv)
    s3.create_bucket(Bucket="inflight")
    conn, rest, body = _start_upload(srv, "inflight", "big", 32 * 1024 * 1024)
    try:
        time.sleep(0.5)          # the server is now inside the body
        srv.send_signal(signal.SIGTERM)
        time.sleep(0.2)
        conn.send(rest)          # within shutdown_grace (5s)
        resp = conn.read_response()
    finally:
        conn.close()
    rc = srv.wait_exit()  # already signalled once; a second SIGTERM could mean "now"
    assert rc == 0, srv.logs()
    srv.start()
    s3 = make_client(srv)
    if resp is not None and resp.status == 200:
        got = s3.get_object(Bucket="inflight", Key="big")
        assert hashlib.sha256(got["Body"].read()).digest() == hashlib.sha256(body).digest()
    else:
        # Failed cleanly: an error status or a closed connection, and nothing visible.
        assert resp is None or resp.status >= 400, resp
        with raises_s3("NoSuchKey", 404):
            s3.get_object(Bucket="inflight", Key="big")


def test_sigterm_with_stalled_upload_exits_within_grace(strata_factory):
    srv = strata_factory()
    s3 = make_client(srv)
    s3.create_bucket(Bucket="stalled")
    conn, _rest, _body = _start_upload(srv, "stalled", "half", 8 * 1024 * 1024)
    try:
        time.sleep(0.5)
        started = time.monotonic()
        rc = srv.stop(signal.SIGTERM, expect_rc=None)
        elapsed = time.monotonic() - started
    finally:
        conn.close()
    assert rc == 0, srv.logs()
    assert elapsed < 5 + 5, f"took {elapsed:.1f}s with shutdown_grace = 5s"
    srv.start()
    with raises_s3("NoSuchKey", 404):
        make_client(srv).get_object(Bucket="stalled", Key="half")


def test_port_in_use_exits_nonzero(strata_factory):
    first = strata_factory()
    second = strata_factory(start=False)
    second.config_path.write_text(first.config_path.read_text().replace(
        str(first.workdir / "data"), str(second.workdir / "data")))
    try:
        rc, out = run_strata_expecting_failure(["--config", str(second.config_path)],
                                               second.workdir, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail(f"a second strata on port {first.port}, already in use, kept running "
                    "(SO_REUSEPORT lets two processes share a port: check before binding)")
    assert rc != 0, out
    assert str(first.port) in out, out
