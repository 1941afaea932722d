"""A request body must keep a minimum average rate (server.body_min_rate_bytes_per_s
after server.body_rate_grace): a client trickling its body is cut off with 400
RequestTimeout and nothing of it is stored, while a slow client above the rate is served."""
import select
import time

import botocore.exceptions
import pytest

import s3sign
from conftest import ADMIN_AK, ADMIN_SK, RawConn, metric

RATE = 100        # bytes a second
GRACE_S = 1.0


@pytest.fixture
def paced(strata_factory):
    return strata_factory(overrides={"server": {
        "body_min_rate_bytes_per_s": RATE, "body_rate_grace": f"{int(GRACE_S * 1000)}ms",
        # Far beyond the test: only the rate can cut the body off.
        "idle_timeout": "120s"}})


def put_head(srv, bucket, key, length) -> bytes:
    amz_date = s3sign.amz_now()
    headers = {"host": srv.netloc, "x-amz-date": amz_date,
               "x-amz-content-sha256": s3sign.UNSIGNED_PAYLOAD, "content-length": str(length)}
    auth = s3sign.SigV4(ADMIN_AK, ADMIN_SK, srv.region).authorization(
        "PUT", f"/{bucket}/{key}", [], headers, s3sign.UNSIGNED_PAYLOAD)
    head = f"PUT /{bucket}/{key} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return (head + f"authorization: {auth}\r\n\r\n").encode()


def trickle(conn, data: bytes, piece: int, interval: float, limit: float):
    """Sends `data` `piece` bytes per `interval` seconds, stopping early when the server
    answers (the pacing waits on the socket, so an answer ends it at once). Returns
    (seconds from the first byte to the answer or the last byte, bytes sent)."""
    start = time.monotonic()
    sent = 0
    while sent < len(data):
        conn.send(data[sent:sent + piece])
        sent += piece
        next_at = start + (sent // piece) * interval
        wait = max(0.0, next_at - time.monotonic())
        readable, _, _ = select.select([conn.sock], [], [], wait)
        if readable:
            break
        assert time.monotonic() - start < limit, f"not cut off within {limit}s ({sent} bytes)"
    return time.monotonic() - start, sent


def client_for(srv):
    import boto3
    from botocore.config import Config
    return boto3.client("s3", endpoint_url=f"http://{srv.netloc}", aws_access_key_id=ADMIN_AK,
                        aws_secret_access_key=ADMIN_SK, region_name=srv.region,
                        config=Config(retries={"max_attempts": 1}))


def test_trickled_body_is_cut_off(paced):
    s3 = client_for(paced)
    s3.create_bucket(Bucket="slow")
    size = 10_000
    conn = RawConn(paced, timeout=30)
    try:
        conn.send(put_head(paced, "slow", "trickled", size))
        # 5 bytes a second against a minimum of 100: the allowance is the grace plus
        # 10 ms a byte received, so the cut comes about 1.05 s in.
        elapsed, sent = trickle(conn, b"x" * size, piece=1, interval=0.2, limit=10)
        resp = conn.read_response()
        assert resp is not None, "closed without an answer"
        assert (resp.status, resp.code) == (400, "RequestTimeout"), resp
        assert resp.headers.get("connection") == "close", resp
        assert conn.closed_by_peer(wait=5)
    finally:
        conn.close()
    bound = GRACE_S + sent / RATE + 1.0  # one second of slack for a loaded machine
    assert elapsed < bound, f"cut off after {elapsed:.2f}s, bound {bound:.2f}s"
    with pytest.raises(botocore.exceptions.ClientError) as info:
        s3.head_object(Bucket="slow", Key="trickled")
    assert info.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
    assert metric(paced, "strata_requests_total", op="PutObject", code="400") == 1


def test_stalled_body_is_cut_off(paced):
    # Not a byte after the head: the grace alone.
    s3 = client_for(paced)
    s3.create_bucket(Bucket="slow")
    conn = RawConn(paced, timeout=30)
    try:
        start = time.monotonic()
        conn.send(put_head(paced, "slow", "stalled", 100) + b"abc")
        resp = conn.read_response()
        elapsed = time.monotonic() - start
    finally:
        conn.close()
    assert resp is not None and (resp.status, resp.code) == (400, "RequestTimeout"), resp
    assert GRACE_S - 0.1 < elapsed < GRACE_S + 1.5, elapsed
    assert "stalled" not in [o["Key"] for o in s3.list_objects_v2(Bucket="slow").get("Contents", [])]


def test_slow_body_above_the_rate_is_served(paced):
    s3 = client_for(paced)
    s3.create_bucket(Bucket="slow")
    size = 1500
    data = bytes(range(256)) * 5 + b"y" * (size - 1280)
    conn = RawConn(paced, timeout=30)
    try:
        conn.send(put_head(paced, "slow", "steady", size))
        # 300 bytes a second, three times the minimum, for five seconds: well past the
        # grace, so only the earned allowance keeps it going.
        elapsed, sent = trickle(conn, data, piece=30, interval=0.1, limit=20)
        assert sent == size
        resp = conn.read_response()
    finally:
        conn.close()
    assert resp is not None and resp.status == 200, resp
    assert elapsed > 4 * GRACE_S
    assert s3.get_object(Bucket="slow", Key="steady")["Body"].read() == data
