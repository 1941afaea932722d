"""Multipart edge cases real clients hit: a CompleteMultipartUpload retried after its
response was lost, conditional completion (If-Match / If-None-Match), partNumber past the
last part, malformed x-amz-copy-source-range, and a part uploaded twice at once."""
import hashlib
import os

import pytest

import s3sign
from conftest import ADMIN_AK, ADMIN_SK, RawConn, raises_s3, raw_exchange

MiB = 1 << 20


def upload_two_parts(s3, bucket, key, tail=b"tail"):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    parts = [os.urandom(5 * MiB), tail]
    done = []
    for number, body in enumerate(parts, start=1):
        resp = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number,
                              Body=body)
        done.append({"PartNumber": number, "ETag": resp["ETag"]})
    return upload_id, parts, done


def complete_with_headers(s3, bucket, key, upload_id, done, headers):
    """CompleteMultipartUpload with extra request headers (boto3 1.26 has no IfMatch)."""
    def add(request, **_):
        for name, value in headers.items():
            request.headers[name] = value
    s3.meta.events.register_first("before-sign.s3.CompleteMultipartUpload", add)
    try:
        return s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id,
                                            MultipartUpload={"Parts": done})
    finally:
        s3.meta.events.unregister("before-sign.s3.CompleteMultipartUpload", add)


def result_of(resp):
    return (resp["ETag"], resp["Location"], resp["Bucket"], resp["Key"], resp.get("VersionId"))


@pytest.mark.boto3
@pytest.mark.parametrize("versioned", [False, True])
def test_complete_retried_after_success_answers_the_same(s3, bucket, versioned):
    if versioned:
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    upload_id, parts, done = upload_two_parts(s3, bucket, "obj")
    first = s3.complete_multipart_upload(Bucket=bucket, Key="obj", UploadId=upload_id,
                                         MultipartUpload={"Parts": done})
    again = s3.complete_multipart_upload(Bucket=bucket, Key="obj", UploadId=upload_id,
                                         MultipartUpload={"Parts": done})
    assert result_of(again) == result_of(first)
    assert (first.get("VersionId") is not None) == versioned
    if versioned:
        # A newer version does not hide the completed one from the retry.
        s3.put_object(Bucket=bucket, Key="obj", Body=b"newer")
        later = s3.complete_multipart_upload(Bucket=bucket, Key="obj", UploadId=upload_id,
                                             MultipartUpload={"Parts": done})
        assert result_of(later) == result_of(first)
    # Nothing was written twice: one object (or two versions: the upload's and "newer").
    if versioned:
        versions = s3.list_object_versions(Bucket=bucket)["Versions"]
        assert len(versions) == 2
    else:
        got = s3.get_object(Bucket=bucket, Key="obj")
        assert got["Body"].read() == b"".join(parts)
    # A different parts list is not the same request: the upload is gone.
    with raises_s3("NoSuchUpload", 404):
        s3.complete_multipart_upload(Bucket=bucket, Key="obj", UploadId=upload_id,
                                     MultipartUpload={"Parts": done[:1]})
    with raises_s3("NoSuchUpload", 404):
        s3.complete_multipart_upload(Bucket=bucket, Key="obj", UploadId=upload_id,
                                     MultipartUpload={"Parts": [
                                         done[0], {"PartNumber": 2, "ETag": done[0]["ETag"]}]})
    # Another key's retry with this upload id is no match either.
    with raises_s3("NoSuchUpload", 404):
        s3.complete_multipart_upload(Bucket=bucket, Key="other", UploadId=upload_id,
                                     MultipartUpload={"Parts": done})


@pytest.mark.boto3
def test_complete_retry_after_overwrite_or_abort_is_no_such_upload(s3, bucket):
    upload_id, _, done = upload_two_parts(s3, bucket, "obj")
    s3.complete_multipart_upload(Bucket=bucket, Key="obj", UploadId=upload_id,
                                 MultipartUpload={"Parts": done})
    s3.put_object(Bucket=bucket, Key="obj", Body=b"overwritten")
    with raises_s3("NoSuchUpload", 404):
        s3.complete_multipart_upload(Bucket=bucket, Key="obj", UploadId=upload_id,
                                     MultipartUpload={"Parts": done})
    aborted, _, done = upload_two_parts(s3, bucket, "gone")
    s3.abort_multipart_upload(Bucket=bucket, Key="gone", UploadId=aborted)
    with raises_s3("NoSuchUpload", 404):
        s3.complete_multipart_upload(Bucket=bucket, Key="gone", UploadId=aborted,
                                     MultipartUpload={"Parts": done})


@pytest.mark.boto3
def test_complete_if_none_match(s3, bucket):
    s3.put_object(Bucket=bucket, Key="taken", Body=b"already here")
    upload_id, parts, done = upload_two_parts(s3, bucket, "taken")
    with raises_s3("PreconditionFailed", 412):
        complete_with_headers(s3, bucket, "taken", upload_id, done, {"If-None-Match": "*"})
    # The refused completion changed nothing: the upload is still there to complete.
    assert s3.get_object(Bucket=bucket, Key="taken")["Body"].read() == b"already here"
    listed = s3.list_parts(Bucket=bucket, Key="taken", UploadId=upload_id)["Parts"]
    assert [p["PartNumber"] for p in listed] == [1, 2]
    s3.complete_multipart_upload(Bucket=bucket, Key="taken", UploadId=upload_id,
                                 MultipartUpload={"Parts": done})
    assert s3.get_object(Bucket=bucket, Key="taken")["Body"].read() == b"".join(parts)

    fresh, parts, done = upload_two_parts(s3, bucket, "fresh")
    resp = complete_with_headers(s3, bucket, "fresh", fresh, done, {"If-None-Match": "*"})
    assert s3.head_object(Bucket=bucket, Key="fresh")["ETag"] == resp["ETag"]


@pytest.mark.boto3
def test_complete_if_match(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="k", Body=b"v1")
    upload_id, parts, done = upload_two_parts(s3, bucket, "k")
    with raises_s3("PreconditionFailed", 412):
        complete_with_headers(s3, bucket, "k", upload_id, done,
                              {"If-Match": '"0123456789abcdef0123456789abcdef"'})
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"v1"
    complete_with_headers(s3, bucket, "k", upload_id, done, {"If-Match": put["ETag"]})
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"".join(parts)
    # If-Match on a key with no object: as on PutObject, NoSuchKey.
    upload_id, _, done = upload_two_parts(s3, bucket, "absent")
    with raises_s3("NoSuchKey", 404):
        complete_with_headers(s3, bucket, "absent", upload_id, done, {"If-Match": put["ETag"]})


def test_part_number_past_the_last_part(server, s3, bucket):
    upload_id, _, done = upload_two_parts(s3, bucket, "mp")
    s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload_id,
                                 MultipartUpload={"Parts": done})
    signer = s3sign.SigV4(ADMIN_AK, ADMIN_SK, server.region)
    for method in ("GET", "HEAD"):
        for number in ("3", "10000"):
            req = s3sign.signed_request_bytes(signer, method, server.netloc, f"/{bucket}/mp",
                                              query=[("partNumber", number)])
            conn = RawConn(server)
            try:
                conn.send(req)
                resp = conn.read_response(head_request=method == "HEAD")
            finally:
                conn.close()
            assert resp.status == 416, (method, number, resp)
            if method == "GET":
                assert resp.code == "InvalidPartNumber", resp
        # Not a part number at all: 400.
        req = s3sign.signed_request_bytes(signer, method, server.netloc, f"/{bucket}/mp",
                                          query=[("partNumber", "10001")])
        conn = RawConn(server)
        try:
            conn.send(req)
            resp = conn.read_response(head_request=method == "HEAD")
        finally:
            conn.close()
        assert resp.status == 400, resp


@pytest.mark.boto3
@pytest.mark.parametrize("spec", [
    "bytes=0-1048576",  # past the end of a 1 MiB source
    "bytes=1048576-1048577",
    "bytes=-1", "bytes=0-", "bytes=5-4", "bytes=", "bytes=0-1,2-3", "bytes=a-b", "0-1",
    "bytes=0x0-1",
])
def test_upload_part_copy_bad_range(s3, bucket, spec):
    # S3 answers 400 InvalidArgument ("Range specified is not valid for source object of
    # size: N") for every range that is not within the source, malformed or not.
    s3.put_object(Bucket=bucket, Key="src", Body=os.urandom(MiB))
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="dst")["UploadId"]
    with raises_s3("InvalidArgument", 400):
        s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=upload_id, PartNumber=1,
                            CopySource={"Bucket": bucket, "Key": "src"}, CopySourceRange=spec)
    ok = s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=upload_id, PartNumber=1,
                             CopySource={"Bucket": bucket, "Key": "src"},
                             CopySourceRange=f"bytes=0-{MiB - 1}")
    assert ok["CopyPartResult"]["ETag"].startswith('"')


def test_part_uploaded_twice_at_once_last_to_finish_wins(server, s3, bucket):
    """Two uploads of part 1 overlap: the slow one starts first and finishes last. The
    part is then the slow one's bytes, whole (never a mix), and its ETag completes."""
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="race")["UploadId"]
    signer = s3sign.SigV4(ADMIN_AK, ADMIN_SK, server.region)
    slow_body, fast_body = os.urandom(3 * MiB), os.urandom(3 * MiB)
    query = [("partNumber", "1"), ("uploadId", upload_id)]

    def request(body):
        return s3sign.signed_request_bytes(signer, "PUT", server.netloc, f"/{bucket}/race",
                                           query=query, body=body)

    slow_req = request(slow_body)
    slow = RawConn(server, timeout=60)
    try:
        slow.send(slow_req[:len(slow_req) - 2 * MiB])  # header and a third of the body
        fast = raw_exchange(server, request(fast_body), timeout=60)
        assert fast.status == 200, fast
        fast_etag = fast.headers["etag"]
        assert fast_etag == f'"{hashlib.md5(fast_body).hexdigest()}"'
        listed = s3.list_parts(Bucket=bucket, Key="race", UploadId=upload_id)["Parts"]
        assert [(p["PartNumber"], p["ETag"]) for p in listed] == [(1, fast_etag)]
        slow.send(slow_req[len(slow_req) - 2 * MiB:])
        resp = slow.read_response()
    finally:
        slow.close()
    assert resp.status == 200, resp
    slow_etag = resp.headers["etag"]
    assert slow_etag == f'"{hashlib.md5(slow_body).hexdigest()}"'
    listed = s3.list_parts(Bucket=bucket, Key="race", UploadId=upload_id)["Parts"]
    assert [(p["PartNumber"], p["ETag"], p["Size"]) for p in listed] == [
        (1, slow_etag, len(slow_body))]
    with raises_s3("InvalidPart", 400):
        s3.complete_multipart_upload(Bucket=bucket, Key="race", UploadId=upload_id,
                                     MultipartUpload={"Parts": [{"PartNumber": 1,
                                                                 "ETag": fast_etag}]})
    s3.complete_multipart_upload(Bucket=bucket, Key="race", UploadId=upload_id,
                                 MultipartUpload={"Parts": [{"PartNumber": 1,
                                                             "ETag": slow_etag}]})
    assert s3.get_object(Bucket=bucket, Key="race")["Body"].read() == slow_body
