"""Authentication: SigV4 (header, presigned, aws-chunked streaming), SigV2 (header and
presigned), and the errors S3 gives when any of it is wrong."""
import datetime
import hashlib
import subprocess
import time
import urllib.parse

import botocore
import botocore.config
import pytest
import requests

import s3sign
from conftest import (ADMIN_AK, ADMIN_SK, OTHER_AK, make_client, raises_s3, raw_exchange,
                      xml_code)


# --- header-signed SigV4 ----------------------------------------------------------------

def test_wrong_secret_is_signature_does_not_match(server):
    bad = make_client(server, ADMIN_AK, ADMIN_SK + "x")
    with raises_s3("SignatureDoesNotMatch", 403):
        bad.list_buckets()


def test_unknown_access_key_is_invalid_access_key_id(server):
    bad = make_client(server, "NOSUCHACCESSKEY", "whatever-secret")
    with raises_s3("InvalidAccessKeyId", 403):
        bad.list_buckets()


def test_wrong_secret_put_stores_nothing(server, s3, bucket):
    bad = make_client(server, ADMIN_AK, "not-the-secret")
    with raises_s3("SignatureDoesNotMatch", 403):
        bad.put_object(Bucket=bucket, Key="forged", Body=b"x" * 1000)
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket=bucket, Key="forged")


def test_anonymous_requests_are_access_denied(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"private")
    base = f"{server.endpoint}/{bucket}"
    r = requests.get(f"{base}/k", timeout=30)
    assert (r.status_code, xml_code(r.content)) == (403, "AccessDenied"), r.text
    assert b"private" not in r.content
    r = requests.put(f"{base}/anon", data=b"x", timeout=30)
    assert (r.status_code, xml_code(r.content)) == (403, "AccessDenied"), r.text
    r = requests.get(f"{server.endpoint}/", timeout=30)
    assert (r.status_code, xml_code(r.content)) == (403, "AccessDenied"), r.text
    r = requests.get(base, timeout=30)
    assert (r.status_code, xml_code(r.content)) == (403, "AccessDenied"), r.text
    unsigned = make_client(server, signature_version=botocore.UNSIGNED)
    with raises_s3("AccessDenied", 403):
        unsigned.get_object(Bucket=bucket, Key="k")
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket=bucket, Key="anon")


def test_payload_hash_mismatch(server, s3, bucket):
    signer = s3sign.SigV4(ADMIN_AK, ADMIN_SK, server.region)
    body = b"the body that is sent"
    req = s3sign.signed_request_bytes(
        signer, "PUT", server.netloc, f"/{bucket}/mismatch", body=body,
        payload_hash=hashlib.sha256(b"a different body").hexdigest())
    resp = raw_exchange(server, req)
    assert resp is not None, "server closed the connection without an answer"
    assert (resp.status, resp.code) == (400, "XAmzContentSHA256Mismatch"), resp
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket=bucket, Key="mismatch")


def test_hand_signed_request_is_accepted(server, s3, bucket):
    # The positive control for the raw-socket tests: the same signer, correct inputs.
    signer = s3sign.SigV4(ADMIN_AK, ADMIN_SK, server.region)
    req = s3sign.signed_request_bytes(signer, "PUT", server.netloc, f"/{bucket}/hand signed",
                                      body=b"by hand")
    resp = raw_exchange(server, req)
    assert resp is not None and resp.status == 200, resp
    assert s3.get_object(Bucket=bucket, Key="hand signed")["Body"].read() == b"by hand"


def test_request_time_too_skewed(server, bucket):
    signer = s3sign.SigV4(ADMIN_AK, ADMIN_SK, server.region)
    old = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=20))
    req = s3sign.signed_request_bytes(signer, "GET", server.netloc, f"/{bucket}",
                                      amz_date=old.strftime("%Y%m%dT%H%M%SZ"))
    resp = raw_exchange(server, req)
    assert resp is not None
    assert (resp.status, resp.code) == (403, "RequestTimeTooSkewed"), resp


# --- presigned SigV4 ----------------------------------------------------------------------

def curl(*args, timeout=60):
    res = subprocess.run(["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", *args],
                         capture_output=True, timeout=timeout)
    body, _, code = res.stdout.rpartition(b"\n")
    return int(code or 0), body


def test_presigned_v4_get_with_requests_and_curl(s3, bucket, presign):
    s3.put_object(Bucket=bucket, Key="dir/presigned get.txt", Body=b"presigned content")
    url = presign("GET", bucket, "dir/presigned get.txt")
    assert "X-Amz-Signature=" in url
    r = requests.get(url, timeout=30)
    assert r.status_code == 200 and r.content == b"presigned content"
    code, body = curl(url)
    assert (code, body) == (200, b"presigned content")


def test_presigned_v4_put_with_curl_and_requests(s3, bucket, presign, tmp_path):
    src = tmp_path / "up.bin"
    src.write_bytes(b"uploaded by curl\n" * 1000)
    code, body = curl("-T", str(src), presign("PUT", bucket, "curl-put"))
    assert code == 200, body
    assert s3.get_object(Bucket=bucket, Key="curl-put")["Body"].read() == src.read_bytes()
    r = requests.put(presign("PUT", bucket, "requests-put"), data=b"uploaded by requests",
                     timeout=30)
    assert r.status_code == 200, r.text
    assert r.headers["ETag"] == '"' + hashlib.md5(b"uploaded by requests").hexdigest() + '"'
    assert s3.get_object(Bucket=bucket, Key="requests-put")["Body"].read() == \
        b"uploaded by requests"


def test_presigned_v4_tampered(s3, bucket, presign):
    s3.put_object(Bucket=bucket, Key="a", Body=b"a")
    s3.put_object(Bucket=bucket, Key="b", Body=b"b")
    url = presign("GET", bucket, "a")
    r = requests.get(url.replace(f"/{bucket}/a?", f"/{bucket}/b?"), timeout=30)
    assert (r.status_code, xml_code(r.content)) == (403, "SignatureDoesNotMatch"), r.text
    sig = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["X-Amz-Signature"][0]
    flipped = ("0" if sig[0] != "0" else "1") + sig[1:]
    r = requests.get(url.replace(sig, flipped), timeout=30)
    assert (r.status_code, xml_code(r.content)) == (403, "SignatureDoesNotMatch"), r.text


def test_presigned_v4_unknown_key(server, s3, bucket, presign_factory):
    s3.put_object(Bucket=bucket, Key="a", Body=b"a")
    url = presign_factory(server, "GET", bucket, "a", access_key="NOSUCHKEY",
                          secret_key="whatever")
    r = requests.get(url, timeout=30)
    assert (r.status_code, xml_code(r.content)) == (403, "InvalidAccessKeyId"), r.text


@pytest.mark.parametrize("version", ["s3v4", "s3"])
def test_presigned_expired(s3, bucket, presign, version):
    s3.put_object(Bucket=bucket, Key="soon-expired", Body=b"x")
    url = presign("GET", bucket, "soon-expired", expires=1, signature_version=version)
    time.sleep(2.5)
    r = requests.get(url, timeout=30)
    assert (r.status_code, xml_code(r.content)) == (403, "AccessDenied"), r.text
    assert b"x" != r.content


def test_presigned_v4_expiry_over_a_week(s3, bucket, presign):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    url = presign("GET", bucket, "k", expires=604801)
    r = requests.get(url, timeout=30)
    assert (r.status_code, xml_code(r.content)) == (400, "AuthorizationQueryParametersError"), \
        r.text


# --- SigV2 ----------------------------------------------------------------------------------

def test_presigned_v2_get_with_curl_and_requests(s3, bucket, presign):
    s3.put_object(Bucket=bucket, Key="v2 get", Body=b"sigv2 presigned")
    url = presign("GET", bucket, "v2 get", signature_version="s3")
    assert "AWSAccessKeyId=" in url and "Signature=" in url and "X-Amz-" not in url
    assert curl(url) == (200, b"sigv2 presigned")
    r = requests.get(url, timeout=30)
    assert r.status_code == 200 and r.content == b"sigv2 presigned"


def test_presigned_v2_put_with_curl_and_requests(s3, bucket, presign, tmp_path):
    src = tmp_path / "v2.bin"
    src.write_bytes(b"sigv2 via curl")
    code, body = curl("-T", str(src), presign("PUT", bucket, "v2-curl", signature_version="s3"))
    assert code == 200, body
    assert s3.get_object(Bucket=bucket, Key="v2-curl")["Body"].read() == b"sigv2 via curl"
    r = requests.put(presign("PUT", bucket, "v2-requests", signature_version="s3"),
                     data=b"sigv2 via requests", timeout=30)
    assert r.status_code == 200, r.text
    assert s3.get_object(Bucket=bucket, Key="v2-requests")["Body"].read() == \
        b"sigv2 via requests"


def test_presigned_v2_expires_past_2262(s3, bucket, presign):
    """An Expires beyond what a nanosecond clock holds (2262) is just far away: it was
    converted to a time point, a signed overflow the sanitized build aborted on (found by
    tests/fuzz/http_request_fuzz.cc)."""
    s3.put_object(Bucket=bucket, Key="far", Body=b"far future")
    url = presign("GET", bucket, "far", signature_version="s3", expires=8_000_000_000)
    assert int(urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["Expires"][0]) > 2**63 // 10**9
    r = requests.get(url, timeout=30)
    assert (r.status_code, r.content) == (200, b"far future"), r.text


def test_amz_date_past_2262_is_refused(server, bucket):
    """An x-amz-date the clock cannot hold is refused as any unusable date, not overflowed."""
    signer = s3sign.SigV4(ADMIN_AK, ADMIN_SK, server.region)
    req = s3sign.signed_request_bytes(signer, "GET", server.netloc, f"/{bucket}",
                                      amz_date="99991231T235959Z")
    resp = raw_exchange(server, req)
    assert resp is not None and resp.status == 403, resp


def test_presigned_v2_tampered(s3, bucket, presign):
    s3.put_object(Bucket=bucket, Key="a", Body=b"a")
    s3.put_object(Bucket=bucket, Key="b", Body=b"b")
    url = presign("GET", bucket, "a", signature_version="s3")
    r = requests.get(url.replace(f"/{bucket}/a?", f"/{bucket}/b?"), timeout=30)
    assert (r.status_code, xml_code(r.content)) == (403, "SignatureDoesNotMatch"), r.text


def test_header_signed_v2(server, s3, bucket):
    v2 = make_client(server, signature_version="s3")
    put = v2.put_object(Bucket=bucket, Key="v2/header", Body=b"signed with v2",
                        Metadata={"via": "sigv2"}, ContentType="text/plain")
    assert put["ETag"] == '"' + hashlib.md5(b"signed with v2").hexdigest() + '"'
    got = v2.get_object(Bucket=bucket, Key="v2/header")
    assert got["Body"].read() == b"signed with v2"
    assert got["Metadata"] == {"via": "sigv2"}
    assert bucket in [b["Name"] for b in v2.list_buckets()["Buckets"]]
    v2.delete_object(Bucket=bucket, Key="v2/header")
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket=bucket, Key="v2/header")


def test_header_signed_v2_wrong_secret(server, bucket):
    bad = make_client(server, ADMIN_AK, "wrong-secret", signature_version="s3")
    with raises_s3("SignatureDoesNotMatch", 403):
        bad.list_buckets()
    unknown = make_client(server, "NOSUCHKEY", "wrong-secret", signature_version="s3")
    with raises_s3("InvalidAccessKeyId", 403):
        unknown.put_object(Bucket=bucket, Key="x", Body=b"x")


# --- aws-chunked (STREAMING-AWS4-HMAC-SHA256-PAYLOAD) -------------------------------------

def _streaming(server, bucket, key, data, corrupt_chunk=-1, chunk_size=64 * 1024):
    signer = s3sign.SigV4(ADMIN_AK, ADMIN_SK, server.region)
    head, body = s3sign.streaming_put(signer, server.netloc, f"/{bucket}/{key}", data,
                                      chunk_size=chunk_size, corrupt_chunk=corrupt_chunk)
    return raw_exchange(server, head + body)


def test_streaming_signed_upload(s3, server, bucket):
    data = bytes(range(256)) * 1000 + b"tail"  # 256004 bytes: 3 full chunks and a short one
    resp = _streaming(server, bucket, "chunked", data)
    assert resp is not None and resp.status == 200, resp
    assert resp.headers["etag"] == '"' + hashlib.md5(data).hexdigest() + '"'
    got = s3.get_object(Bucket=bucket, Key="chunked")
    assert got["Body"].read() == data
    # aws-chunked is a transfer detail: it must not be stored as the object's encoding.
    assert "aws-chunked" not in got.get("ContentEncoding", "")


def test_streaming_small_chunks(s3, server, bucket):
    data = b"0123456789" * 2000
    resp = _streaming(server, bucket, "small-chunks", data, chunk_size=8192)
    assert resp is not None and resp.status == 200, resp
    assert s3.get_object(Bucket=bucket, Key="small-chunks")["Body"].read() == data


@pytest.mark.parametrize("corrupt", [0, 2, 4])  # first, middle, the final empty chunk
def test_streaming_bad_chunk_signature_stores_nothing(s3, server, bucket, corrupt):
    data = b"z" * (4 * 64 * 1024)  # chunks 0..3 carry data, chunk 4 is the empty final one
    resp = _streaming(server, bucket, f"bad-chunk-{corrupt}", data, corrupt_chunk=corrupt)
    assert resp is not None, "server closed the connection without an answer"
    assert (resp.status, resp.code) == (403, "SignatureDoesNotMatch"), resp
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket=bucket, Key=f"bad-chunk-{corrupt}")


def test_streaming_bad_chunk_does_not_clobber_existing(s3, server, bucket):
    s3.put_object(Bucket=bucket, Key="keep", Body=b"original")
    resp = _streaming(server, bucket, "keep", b"y" * 200000, corrupt_chunk=1)
    assert resp is not None and resp.status == 403, resp
    assert s3.get_object(Bucket=bucket, Key="keep")["Body"].read() == b"original"


def test_botocore_streaming_checksum_over_http(s3, bucket):
    # Whatever body encoding this botocore picks over plain HTTP (a checksum header here),
    # the object must round-trip.
    body = b"checksummed " * 5000
    s3.put_object(Bucket=bucket, Key="crc", Body=body)
    assert s3.get_object(Bucket=bucket, Key="crc")["Body"].read() == body


def test_other_user_wrong_secret(server, bucket):
    other = make_client(server, OTHER_AK, "wrong")
    with raises_s3("SignatureDoesNotMatch", 403):
        other.list_buckets()
