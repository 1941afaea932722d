"""Malformed input on raw sockets: the server answers with S3's errors, never stores a
partial object, and keeps serving other connections."""
import time

import pytest

import s3sign
from conftest import ADMIN_AK, ADMIN_SK, RawConn, raises_s3, raw_exchange


def assert_still_serving(s3):
    assert s3.list_buckets()["ResponseMetadata"]["HTTPStatusCode"] == 200


def signer_for(server):
    return s3sign.SigV4(ADMIN_AK, ADMIN_SK, server.region)


@pytest.mark.parametrize("garbage", [
    b"GARBAGE\r\n\r\n",
    b"GET\r\n\r\n",
    b"GET / HTTP/1.1 extra\r\nHost: x\r\n\r\n",
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 64 + b"\r\n\r\n",  # TLS hello
    b"GET / HTTP/1.1\r\nHost x\r\n\r\n",                      # header without a colon
    b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
])
def test_garbage_gets_400_and_server_survives(server, s3, garbage):
    resp = raw_exchange(server, garbage, shutdown_write=True)
    if resp is not None:  # closing without a response is acceptable for non-HTTP bytes
        assert resp.status == 400, resp
    elif garbage.startswith(b"GARBAGE"):
        pytest.fail("a garbage request line must get 400 Bad Request")
    assert_still_serving(s3)


def test_unsigned_put_with_broken_chunking_is_refused(server, s3, bucket):
    # The header is valid HTTP, so the authorization answers first (an anonymous PUT into
    # a private bucket, as S3 does) and the broken chunked body is never read.
    resp = raw_exchange(server, f"PUT /{bucket}/k HTTP/1.1\r\nHost: x\r\n".encode() +
                        b"Transfer-Encoding: chunked\r\n\r\nzz\r\n", shutdown_write=True)
    assert resp is not None and resp.status == 403 and resp.code == "AccessDenied", resp
    assert_still_serving(s3)


def test_garbage_request_line_is_400(server, s3):
    resp = raw_exchange(server, b"GARBAGE\r\n\r\n")
    assert resp is not None, "server closed the connection without answering 400"
    assert resp.status == 400, resp
    assert_still_serving(s3)


def test_oversized_header_is_400(server, s3):
    req = (b"GET / HTTP/1.1\r\nHost: " + server.netloc.encode() + b"\r\n" +
           b"X-Padding: " + b"a" * (64 * 1024) + b"\r\n\r\n")
    resp = raw_exchange(server, req)
    assert resp is not None, ("server reset the connection without answering; it should "
                              "answer 400 and close gracefully")
    assert resp.status == 400, resp
    assert resp.code == "RequestHeaderSectionTooLarge", resp
    assert_still_serving(s3)


def test_many_headers_is_400(server, s3):
    req = b"GET / HTTP/1.1\r\nHost: x\r\n" + b"".join(
        b"X-H%d: v\r\n" % i for i in range(4000)) + b"\r\n"
    resp = raw_exchange(server, req)
    assert resp is not None and resp.status == 400, resp
    assert_still_serving(s3)


def _auth_request(server, path, authorization, amz_date=None):
    amz_date = amz_date or s3sign.amz_now()
    return (f"GET {path} HTTP/1.1\r\nHost: {server.netloc}\r\n"
            f"x-amz-date: {amz_date}\r\nx-amz-content-sha256: {s3sign.EMPTY_SHA256}\r\n"
            f"Authorization: {authorization}\r\nConnection: close\r\n\r\n").encode()


@pytest.mark.parametrize("make_auth", [
    # Missing SignedHeaders and Signature.
    lambda d: f"AWS4-HMAC-SHA256 Credential={ADMIN_AK}/{d[:8]}/us-east-1/s3/aws4_request",
    # Credential scope with too few parts.
    lambda d: (f"AWS4-HMAC-SHA256 Credential={ADMIN_AK}/{d[:8]}/us-east-1, "
               f"SignedHeaders=host;x-amz-date, Signature={'0' * 64}"),
    # A date that is not a date.
    lambda d: (f"AWS4-HMAC-SHA256 Credential={ADMIN_AK}/notadate/us-east-1/s3/aws4_request, "
               f"SignedHeaders=host;x-amz-date, Signature={'0' * 64}"),
    # The wrong region: S3 says which one it expects.
    lambda d: (f"AWS4-HMAC-SHA256 Credential={ADMIN_AK}/{d[:8]}/eu-west-1/s3/aws4_request, "
               f"SignedHeaders=host;x-amz-date, Signature={'0' * 64}"),
    # The wrong service and terminator.
    lambda d: (f"AWS4-HMAC-SHA256 Credential={ADMIN_AK}/{d[:8]}/us-east-1/ec2/aws4_request, "
               f"SignedHeaders=host;x-amz-date, Signature={'0' * 64}"),
    lambda d: (f"AWS4-HMAC-SHA256 Credential={ADMIN_AK}/{d[:8]}/us-east-1/s3/aws5_request, "
               f"SignedHeaders=host;x-amz-date, Signature={'0' * 64}"),
])
def test_malformed_sigv4_authorization(server, s3, make_auth):
    resp = raw_exchange(server, _auth_request(server, "/", make_auth(s3sign.amz_now())))
    assert resp is not None
    assert (resp.status, resp.code) == (400, "AuthorizationHeaderMalformed"), resp
    assert_still_serving(s3)


@pytest.mark.parametrize("authorization", [
    "Bearer abcdef",
    "AWS4-HMAC-SHA256",
    "AWS strata",                # SigV2 without the signature
    "",
])
def test_unusable_authorization(server, s3, authorization):
    # S3: unsupported schemes are 400 InvalidArgument ("Unsupported Authorization Type");
    # a SigV2 header without ':' is 400 InvalidArgument or 403 AccessDenied; an empty one
    # makes the request anonymous (403 AccessDenied).
    resp = raw_exchange(server, _auth_request(server, "/", authorization))
    assert resp is not None
    assert (resp.status, resp.code) in {(400, "InvalidArgument"),
                                        (400, "AuthorizationHeaderMalformed"),
                                        (403, "AccessDenied")}, resp
    assert_still_serving(s3)


def test_missing_date(server, s3, bucket):
    # Correctly signed, but neither x-amz-date nor Date: S3 answers 403 AccessDenied
    # ("AWS authentication requires a valid Date or x-amz-date header").
    signer = signer_for(server)
    amz_date = s3sign.amz_now()
    headers = {"host": server.netloc, "x-amz-date": amz_date,
               "x-amz-content-sha256": s3sign.EMPTY_SHA256}
    auth = signer.authorization("GET", f"/{bucket}", [], headers, s3sign.EMPTY_SHA256)
    req = (f"GET /{bucket} HTTP/1.1\r\nHost: {server.netloc}\r\n"
           f"x-amz-content-sha256: {s3sign.EMPTY_SHA256}\r\n"
           f"Authorization: {auth}\r\nConnection: close\r\n\r\n").encode()
    resp = raw_exchange(server, req)
    assert resp is not None
    assert resp.status in (400, 403), resp
    assert resp.code in ("AccessDenied", "AuthorizationHeaderMalformed",
                         "SignatureDoesNotMatch"), resp


def test_truncated_aws_chunked_body(server, s3, bucket):
    data = b"q" * (3 * 64 * 1024)
    head, body = s3sign.streaming_put(signer_for(server), server.netloc,
                                      f"/{bucket}/truncated-chunked", data)
    conn = RawConn(server)
    try:
        conn.send(head + body[: len(body) // 2])
        conn.shutdown_write()
        resp = conn.read_response()
    finally:
        conn.close()
    # Either an error (400 IncompleteBody or similar) or a closed connection; never 200.
    if resp is not None:
        assert resp.status == 400, resp
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket=bucket, Key="truncated-chunked")
    assert_still_serving(s3)


def test_truncated_plain_body(server, s3, bucket):
    body = b"p" * 100000
    req = s3sign.signed_request_bytes(signer_for(server), "PUT", server.netloc,
                                      f"/{bucket}/truncated-plain", body=body)
    conn = RawConn(server)
    try:
        conn.send(req[: len(req) - 50000])
        conn.shutdown_write()
        resp = conn.read_response()
    finally:
        conn.close()
    if resp is not None:
        assert resp.status == 400, resp
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket=bucket, Key="truncated-plain")


def test_bad_chunk_framing(server, s3, bucket):
    signer = signer_for(server)
    head, body = s3sign.streaming_put(signer, server.netloc, f"/{bucket}/bad-framing",
                                      b"r" * 100000)
    # Replace the first chunk's hex size with something that is not hex.
    broken = b"zzzz" + body[body.index(b";"):]
    resp = raw_exchange(server, head + broken, shutdown_write=True)
    if resp is not None:
        assert resp.status in (400, 403), resp
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket=bucket, Key="bad-framing")
    assert_still_serving(s3)


def test_unimplemented_subresources_are_501(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    with raises_s3("NotImplemented", 501):
        s3.get_object_torrent(Bucket=bucket, Key="k")


@pytest.mark.parametrize("method,query,on_key", [
    ("GET", [("logging", "")], False),
    ("GET", [("torrent", "")], True),
    ("GET", [("website", "")], False),
])
def test_unimplemented_raw_xml(server, bucket, method, query, on_key):
    path = f"/{bucket}/k" if on_key else f"/{bucket}"
    req = s3sign.signed_request_bytes(signer_for(server), method, server.netloc, path,
                                      query=query)
    resp = raw_exchange(server, req)
    assert resp is not None
    assert resp.status == 501, resp
    assert resp.headers.get("content-type", "").startswith("application/xml"), resp
    assert resp.code == "NotImplemented", resp


def test_method_not_allowed(server, bucket):
    req = s3sign.signed_request_bytes(signer_for(server), "PATCH", server.netloc,
                                      f"/{bucket}/k", body=b"x")
    resp = raw_exchange(server, req)
    assert resp is not None
    assert (resp.status, resp.code) == (405, "MethodNotAllowed"), resp


def test_pipelined_requests(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="one", Body=b"first object")
    s3.put_object(Bucket=bucket, Key="two", Body=b"second object, longer")
    signer = signer_for(server)

    def get(key, close):
        req = s3sign.signed_request_bytes(signer, "GET", server.netloc, f"/{bucket}/{key}")
        return req if close else req.replace(b"connection: close\r\n", b"")

    conn = RawConn(server)
    try:
        conn.send(get("one", False) + get("missing", False) + get("two", True))
        first, second, third = conn.read_response(), conn.read_response(), conn.read_response()
    finally:
        conn.close()
    assert first is not None and (first.status, first.body) == (200, b"first object"), first
    assert second is not None and (second.status, second.code) == (404, "NoSuchKey"), second
    assert third is not None and (third.status, third.body) == (200, b"second object, longer")


def test_keep_alive_reuses_connection(server, bucket, s3):
    s3.put_object(Bucket=bucket, Key="ka", Body=b"keep")
    signer = signer_for(server)
    conn = RawConn(server)
    try:
        for _ in range(3):
            req = s3sign.signed_request_bytes(signer, "GET", server.netloc, f"/{bucket}/ka")
            conn.send(req.replace(b"connection: close\r\n", b""))
            resp = conn.read_response()
            assert resp is not None and resp.status == 200 and resp.body == b"keep", resp
    finally:
        conn.close()


def test_slow_header_is_cut_off(strata_factory):
    srv = strata_factory({"server": {"header_timeout": "1s"}})
    conn = RawConn(srv, timeout=15)
    try:
        conn.send(b"GET / HTTP/1.1\r\nHost: x\r\n")  # never finishes the header
        started = time.monotonic()
        assert conn.closed_by_peer(wait=10), "server kept a stalled header open"
        assert time.monotonic() - started < 10
    finally:
        conn.close()


def test_expect_100_continue(server, s3, bucket):
    signer = signer_for(server)
    body = b"after continue"
    req = s3sign.signed_request_bytes(signer, "PUT", server.netloc, f"/{bucket}/continue",
                                      body=body, extra_headers={"expect": "100-continue"})
    head, _, _ = req.partition(b"\r\n\r\n")
    conn = RawConn(server)
    try:
        conn.send(head + b"\r\n\r\n")
        interim = conn.read_response()
        assert interim is not None and interim.status == 100, interim
        conn.send(body)
        final = conn.read_response()
        assert final is not None and final.status == 200, final
    finally:
        conn.close()
    assert s3.get_object(Bucket=bucket, Key="continue")["Body"].read() == body


def test_expect_100_continue_refused_before_body(server, s3, bucket):
    # A bad signature is detected from the header alone: no 100 Continue, a 403, and the
    # body is never needed.
    req = s3sign.signed_request_bytes(
        s3sign.SigV4(ADMIN_AK, "wrong-secret", server.region), "PUT", server.netloc,
        f"/{bucket}/refused", body=b"x" * 1000000, extra_headers={"expect": "100-continue"})
    head, _, _ = req.partition(b"\r\n\r\n")
    conn = RawConn(server)
    try:
        conn.send(head + b"\r\n\r\n")
        resp = conn.read_response()
    finally:
        conn.close()
    assert resp is not None and (resp.status, resp.code) == (403, "SignatureDoesNotMatch"), resp
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket=bucket, Key="refused")


def test_content_md5_header_not_base64(server, s3, bucket):
    req = s3sign.signed_request_bytes(signer_for(server), "PUT", server.netloc,
                                      f"/{bucket}/md5", body=b"x",
                                      extra_headers={"content-md5": "not base64!"})
    resp = raw_exchange(server, req)
    assert resp is not None and (resp.status, resp.code) == (400, "InvalidDigest"), resp
