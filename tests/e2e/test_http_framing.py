"""HTTP/1.1 framing (RFC 9112 sections 2.2, 3.2, 5.2, 6.1 and 6.3) on raw sockets.

A request whose body length two HTTP implementations could read differently is how a
request is smuggled past a proxy: the bytes after it are parsed as a second request the
proxy never saw. Each such head must get 400 and the connection must close with nothing
after it processed. The smuggled request in these tests is a signed CreateBucket: the
bucket not existing afterwards proves it was never run."""
import pytest

import s3sign
from conftest import ADMIN_AK, ADMIN_SK, RawConn, unique_bucket


def signer(server):
    return s3sign.SigV4(ADMIN_AK, ADMIN_SK, server.region)


def signed_list_buckets_head(server, extra: bytes, version=b"HTTP/1.1") -> bytes:
    """A signed ListBuckets head without Connection: close, then the raw `extra` field
    lines (the framing under test), then the empty line."""
    amz_date = s3sign.amz_now()
    headers = {"host": server.netloc, "x-amz-date": amz_date,
               "x-amz-content-sha256": s3sign.EMPTY_SHA256}
    auth = signer(server).authorization("GET", "/", [], headers, s3sign.EMPTY_SHA256)
    head = b"GET / " + version + b"\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()).encode()
    head += f"authorization: {auth}\r\n".encode()
    return head + extra + b"\r\n"


def smuggled_create_bucket(server, bucket) -> bytes:
    return s3sign.signed_request_bytes(signer(server), "PUT", server.netloc, f"/{bucket}")


def bucket_exists(s3, bucket) -> bool:
    return any(b["Name"] == bucket for b in s3.list_buckets()["Buckets"])


def responses_until_close(conn):
    """Every response the server sends on `conn` until it closes it."""
    out = []
    while True:
        resp = conn.read_response()
        if resp is None:
            return out
        out.append(resp)


def test_control_a_pipelined_request_is_run(server, s3):
    # The harness itself: a well-framed request followed by the CreateBucket runs both,
    # so the tests below would see a smuggled request that ran.
    bucket = unique_bucket("framing-control")
    conn = RawConn(server)
    try:
        conn.send(signed_list_buckets_head(server, b"") + smuggled_create_bucket(server, bucket))
        got = responses_until_close(conn)
    finally:
        conn.close()
    assert [r.status for r in got] == [200, 200], got
    assert bucket_exists(s3, bucket)
    s3.delete_bucket(Bucket=bucket)


@pytest.mark.parametrize("framing", [
    b"Transfer-Encoding: chunked, identity\r\n",
    b"Transfer-Encoding: identity\r\n",
    b"Transfer-Encoding: xchunked\r\n",
    b"Transfer-Encoding: chunked, chunked\r\n",
    b"Transfer-Encoding: chunked;ext=1\r\n",
    b"Transfer-Encoding:\r\n",
    b"Transfer-Encoding: identity\r\nContent-Length: 0\r\n",
    b"Content-Length: 0\r\nTransfer-Encoding: identity\r\n",
    b"Transfer-Encoding: chunked\r\nContent-Length: 0\r\n",
    b"Content-Length: 0\r\nTransfer-Encoding: chunked\r\n",
    b"Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n",
    b"Content-Length: 0\r\nContent-Length: 5\r\n",
    b"Content-Length: 0, 5\r\n",
    b"Content-Length: +0\r\n",
    b"Content-Length: 0x0\r\n",
    b"X-Folded: a\r\n b\r\n",
    b"X-Folded: a\r\n\tb\r\n",
    b"Host : 127.0.0.1\r\n",
    b"Host: other.example.com\r\n",
], ids=lambda f: f.decode().replace("\r\n", "|"))
def test_ambiguous_framing_is_400_and_closes(server, s3, framing):
    bucket = unique_bucket("smuggled")
    # A chunked reading would see an empty body ("0" chunk), a Content-Length reading
    # none at all: either way the CreateBucket follows as its own request.
    conn = RawConn(server)
    try:
        body = b"0\r\n\r\n" if b"chunked" in framing and b"Content-Length" not in framing else b""
        conn.send(signed_list_buckets_head(server, framing) + body +
                  smuggled_create_bucket(server, bucket))
        got = responses_until_close(conn)
    finally:
        conn.close()
    assert len(got) == 1, f"more than one response (a second request ran): {got}"
    assert got[0].status == 400, got[0]
    assert got[0].code == "BadRequest", got[0]
    assert got[0].headers.get("connection") == "close", got[0]
    assert not bucket_exists(s3, bucket), "the smuggled CreateBucket ran"


def test_chunked_in_http10_is_400_and_closes(server, s3):
    # RFC 9112 6.1: Transfer-Encoding in HTTP/1.0 means the framing is faulty.
    bucket = unique_bucket("smuggled")
    conn = RawConn(server)
    try:
        conn.send(signed_list_buckets_head(
            server, b"Connection: keep-alive\r\nTransfer-Encoding: chunked\r\n",
            version=b"HTTP/1.0") + b"0\r\n\r\n" + smuggled_create_bucket(server, bucket))
        got = responses_until_close(conn)
    finally:
        conn.close()
    assert [(r.status, r.code) for r in got] == [(400, "BadRequest")], got
    assert not bucket_exists(s3, bucket)


def test_other_codings_under_chunked_are_501(server, s3):
    bucket = unique_bucket("smuggled")
    conn = RawConn(server)
    try:
        conn.send(signed_list_buckets_head(server, b"Transfer-Encoding: gzip, chunked\r\n") +
                  b"0\r\n\r\n" + smuggled_create_bucket(server, bucket))
        got = responses_until_close(conn)
    finally:
        conn.close()
    assert [(r.status, r.code) for r in got] == [(501, "NotImplemented")], got
    assert not bucket_exists(s3, bucket)


@pytest.mark.parametrize("head", [
    b"GET / HTTP/1.1\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: a/b\r\n\r\n",
    b"GET / HTTP/1.1\r\n Host: a\r\n\r\n",
    b"GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n",
], ids=lambda h: h.decode().replace("\r\n", "|"))
def test_bad_host_is_400_and_closes(server, s3, head):
    bucket = unique_bucket("smuggled")
    conn = RawConn(server)
    try:
        conn.send(head + smuggled_create_bucket(server, bucket))
        got = responses_until_close(conn)
    finally:
        conn.close()
    assert [(r.status, r.code) for r in got] == [(400, "BadRequest")], got
    assert not bucket_exists(s3, bucket)


def test_http10_without_host_is_served(server):
    # RFC 9112 3.2 requires Host in HTTP/1.1 only; the request gets S3's answer (403
    # without credentials), not a framing error.
    conn = RawConn(server)
    try:
        conn.send(b"GET / HTTP/1.0\r\n\r\n")
        resp = conn.read_response()
    finally:
        conn.close()
    assert resp is not None and resp.status == 403, resp


def test_http2_version_is_refused(server):
    # Beast refuses any version but 1.x while parsing (400); CheckFraming's 505 covers
    # what gets through.
    conn = RawConn(server)
    try:
        conn.send(b"GET / HTTP/2.0\r\nHost: a\r\n\r\n")
        resp = conn.read_response()
    finally:
        conn.close()
    assert resp is not None and resp.status in (400, 505), resp
    assert resp.headers.get("connection") == "close", resp


def test_chunked_put_still_works(server, s3, bucket):
    # The one Transfer-Encoding strata frames: chunked alone, with no Content-Length.
    data = b"hello chunked world"
    amz_date = s3sign.amz_now()
    headers = {"host": server.netloc, "x-amz-date": amz_date,
               "x-amz-content-sha256": "UNSIGNED-PAYLOAD"}
    auth = signer(server).authorization("PUT", f"/{bucket}/k", [], headers, "UNSIGNED-PAYLOAD")
    head = f"PUT /{bucket}/k HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    head += f"authorization: {auth}\r\ntransfer-encoding: chunked\r\n\r\n"
    body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data)
    conn = RawConn(server)
    try:
        conn.send(head.encode() + body)
        resp = conn.read_response()
    finally:
        conn.close()
    assert resp is not None and resp.status == 200, resp
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == data
