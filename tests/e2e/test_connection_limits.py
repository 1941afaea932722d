"""Connection floods: server.max_connections caps the connections open at once (the
oldest idle keep-alive connection makes room, or the newcomer gets 503 SlowDown), and out
of file descriptors the acceptor answers and closes instead of spinning or leaving
clients in the backlog."""
import contextlib
import os
import resource
import select
import socket
import subprocess
import time

import pytest

import s3sign
from conftest import ADMIN_AK, ADMIN_SK, RawConn, StrataServer, metric


def list_buckets_request(srv) -> bytes:
    amz_date = s3sign.amz_now()
    headers = {"host": srv.netloc, "x-amz-date": amz_date,
               "x-amz-content-sha256": s3sign.EMPTY_SHA256}
    auth = s3sign.SigV4(ADMIN_AK, ADMIN_SK, srv.region).authorization(
        "GET", "/", [], headers, s3sign.EMPTY_SHA256)
    head = "GET / HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return (head + f"authorization: {auth}\r\n\r\n").encode()


def served(conn, srv):
    """Sends a keep-alive ListBuckets on `conn`: its response, or None if closed."""
    conn.send(list_buckets_request(srv))
    return conn.read_response()


def serve_within(srv, seconds):
    """A new connection served 200 within `seconds` (retrying refused ones)."""
    deadline = time.monotonic() + seconds
    last = None
    while time.monotonic() < deadline:
        conn = RawConn(srv, timeout=5)
        try:
            last = served(conn, srv)
            if last is not None and last.status == 200:
                return last
        except OSError as e:
            last = e
        finally:
            conn.close()
    pytest.fail(f"no connection served within {seconds}s; last: {last!r}")


def cpu_seconds(pid) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.fixture
def capped(strata_factory):
    # One I/O thread: the idle connections are all on the core that accepts.
    return strata_factory(overrides={"server": {"max_connections": 4, "threads": 1,
                                                "header_timeout": "60s"}})


def test_oldest_idle_connection_makes_room(capped, raw_factory):
    idle = [raw_factory(capped) for _ in range(4)]
    for conn in idle:  # each served once, then idle in keep-alive, oldest first
        resp = served(conn, capped)
        assert resp is not None and resp.status == 200, resp
    newcomer = raw_factory(capped)
    resp = served(newcomer, capped)
    assert resp is not None and resp.status == 200, resp
    assert idle[0].closed_by_peer(wait=5), "the oldest idle connection was not closed"
    for conn in idle[1:]:  # the others still serve
        resp = served(conn, capped)
        assert resp is not None and resp.status == 200, resp
    for conn in idle[1:] + [newcomer]:
        conn.close()
    serve_within(capped, 5)
    assert metric(capped, "strata_connections_evicted_total") >= 1
    assert metric(capped, "strata_connections_refused_total") == 0


def test_busy_connections_refuse_the_newcomer(capped, raw_factory):
    # Connections in the middle of a request head are not idle: nothing may be closed.
    busy = [raw_factory(capped) for _ in range(4)]
    for conn in busy:
        conn.send(b"GET / HTTP/1.1\r\nHost: x\r\n")
    # The server has seen all four once one of them is counted; the refusal below must
    # not race their accept.
    refused = None
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        conn = RawConn(capped, timeout=5)
        try:
            resp = conn.read_response()
        finally:
            conn.close()
        if resp is not None:
            refused = resp
            break
    assert refused is not None, "never refused"
    assert (refused.status, refused.code) == (503, "SlowDown"), refused
    assert refused.headers.get("connection") == "close"
    # A busy connection finishing its request frees a slot.
    busy[0].send(b"\r\n")
    resp = busy[0].read_response()
    assert resp is not None and resp.status == 403, resp
    busy[0].close()
    serve_within(capped, 5)
    for conn in busy[1:]:
        conn.close()
    serve_within(capped, 5)
    assert metric(capped, "strata_connections_refused_total") >= 1


def start_with_nofile(srv, nofile):
    """Starts `srv` with RLIMIT_NOFILE (soft and hard) at `nofile`."""
    real_popen = subprocess.Popen

    def limited(*args, **kwargs):
        kwargs["preexec_fn"] = lambda: resource.setrlimit(resource.RLIMIT_NOFILE,
                                                          (nofile, nofile))
        return real_popen(*args, **kwargs)

    subprocess.Popen = limited
    try:
        srv.start()
    finally:
        subprocess.Popen = real_popen


def test_out_of_descriptors_answers_and_does_not_spin(tmp_path):
    nofile = 96
    header_timeout = 3.0
    # The cap far above the descriptors: only EMFILE stops the acceptor. Heads that
    # never finish hold their descriptors until header_timeout.
    srv = StrataServer(tmp_path / "fds", overrides={"server": {
        "threads": 1, "max_connections": 100000, "header_timeout": f"{int(header_timeout)}s"}})
    start_with_nofile(srv, nofile)
    socks = []
    try:
        serve_within(srv, 10)
        before = cpu_seconds(srv.proc.pid)
        # Twice the descriptors the server has, each sending the start of a head.
        for _ in range(2 * nofile):
            s = socket.create_connection((srv.host, srv.port), timeout=10)
            with contextlib.suppress(OSError):
                s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
            socks.append(s)
        flooded = time.monotonic()
        # Those the server cannot hold are answered (503, or a reset when their bytes
        # crossed the close) at once: none waits in the backlog for a descriptor.
        answers = {}
        silent = list(socks)
        while silent:
            readable, _, _ = select.select(silent, [], [], 1.0)
            if not readable:
                break
            for s in readable:
                try:
                    answers[s] = s.recv(4096)
                except ConnectionResetError:
                    answers[s] = b""
                silent.remove(s)
        refused = [d for d in answers.values() if d.startswith(b"HTTP/1.1 503")]
        assert all(d.startswith(b"HTTP/1.1 503") or d == b"" for d in answers.values())
        assert refused, "no connection was answered 503"
        assert len(silent) < nofile, (
            f"{len(silent)} connections got no answer with {nofile} descriptors: "
            "clients are waiting in the backlog")
        assert time.monotonic() - flooded < header_timeout, "the answers were not prompt"
        # The held ones end at header_timeout; until then the server, out of
        # descriptors, must not spin on its readable listener.
        while silent:
            readable, _, _ = select.select(silent, [], [], header_timeout + 5)
            assert readable, f"{len(silent)} connections never closed"
            for s in readable:
                with contextlib.suppress(OSError):
                    s.recv(4096)
                silent.remove(s)
        cpu = cpu_seconds(srv.proc.pid) - before
        assert cpu < 1.5, f"{cpu:.2f}s of CPU over the flood and {header_timeout}s holding it"
        for s in socks:
            s.close()
        socks = []
        serve_within(srv, 10)  # recovers once the descriptors are free
        assert metric(srv, "strata_connections_refused_total") >= len(refused)
    finally:
        for s in socks:
            s.close()
        srv.stop()


def test_default_cap_keeps_descriptors_under_a_low_limit(tmp_path):
    # server.max_connections unset: derived from RLIMIT_NOFILE (128: the floor, 16), so a
    # flood of twice the limit is refused at the cap and the server never runs out of
    # descriptors for its own files.
    nofile = 128
    srv = StrataServer(tmp_path / "cap", overrides={"server": {
        "threads": 1, "header_timeout": "3s"}})
    start_with_nofile(srv, nofile)
    socks = []
    try:
        serve_within(srv, 10)
        before = cpu_seconds(srv.proc.pid)
        for _ in range(2 * nofile):
            s = socket.create_connection((srv.host, srv.port), timeout=10)
            with contextlib.suppress(OSError):
                s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
            socks.append(s)
        answers, silent = [], list(socks)
        while silent:
            readable, _, _ = select.select(silent, [], [], 1.0)
            if not readable:
                break
            for s in readable:
                try:
                    answers.append(s.recv(4096))
                except ConnectionResetError:
                    answers.append(b"")
                silent.remove(s)
        refused = [d for d in answers if d.startswith(b"HTTP/1.1 503")]
        assert len(silent) <= 16, f"{len(silent)} connections held, the cap is 16"
        assert len(refused) >= 2 * nofile - 16 - 5, (len(refused), answers[:3])
        assert b"<Code>SlowDown</Code>" in refused[0]
        # The held heads end at header_timeout; the server is quiet meanwhile.
        while silent:
            readable, _, _ = select.select(silent, [], [], 10)
            assert readable, f"{len(silent)} connections never closed"
            for s in readable:
                with contextlib.suppress(OSError):
                    s.recv(4096)
                silent.remove(s)
        cpu = cpu_seconds(srv.proc.pid) - before
        assert cpu < 1.5, f"{cpu:.2f}s of CPU over the flood"
        for s in socks:
            s.close()
        socks = []
        serve_within(srv, 10)
        assert metric(srv, "strata_connections_refused_total") >= len(refused)
        assert "max_connections 16 (RLIMIT_NOFILE 128)" in srv.logs()
    finally:
        for s in socks:
            s.close()
        srv.stop()
