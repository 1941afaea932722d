"""Write edge cases real clients hit: version headers in unversioned buckets, an empty
Content-MD5, tags with empty values, and aws-chunked in Content-Encoding."""
import os
import re

import pytest

import s3sign
from conftest import ADMIN_AK, ADMIN_SK, RawConn, raw_exchange

MiB = 1 << 20


def headers_of(resp):
    return resp["ResponseMetadata"]["HTTPHeaders"]


def no_version_headers(resp, what):
    h = headers_of(resp)
    assert "x-amz-version-id" not in h, (what, h)
    assert "x-amz-delete-marker" not in h, (what, h)


@pytest.mark.boto3
def test_unversioned_bucket_sends_no_version_headers(s3, bucket):
    no_version_headers(s3.put_object(Bucket=bucket, Key="a", Body=b"1"), "PutObject")
    no_version_headers(s3.head_object(Bucket=bucket, Key="a"), "HeadObject")
    no_version_headers(s3.get_object(Bucket=bucket, Key="a"), "GetObject")
    no_version_headers(s3.copy_object(Bucket=bucket, Key="b",
                                      CopySource={"Bucket": bucket, "Key": "a"}), "CopyObject")
    no_version_headers(s3.put_object_tagging(Bucket=bucket, Key="a", Tagging={
        "TagSet": [{"Key": "t", "Value": "1"}]}), "PutObjectTagging")
    no_version_headers(s3.get_object_tagging(Bucket=bucket, Key="a"), "GetObjectTagging")
    no_version_headers(s3.delete_object_tagging(Bucket=bucket, Key="a"), "DeleteObjectTagging")
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="m")["UploadId"]
    part = s3.upload_part(Bucket=bucket, Key="m", UploadId=upload_id, PartNumber=1, Body=b"p")
    no_version_headers(s3.complete_multipart_upload(
        Bucket=bucket, Key="m", UploadId=upload_id,
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]}),
        "CompleteMultipartUpload")
    deleted = s3.delete_object(Bucket=bucket, Key="a")
    no_version_headers(deleted, "DeleteObject")
    assert "DeleteMarker" not in deleted and "VersionId" not in deleted
    no_version_headers(s3.delete_object(Bucket=bucket, Key="never-there"), "DeleteObject absent")
    result = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "b"}, {"Key": "m"},
                                                                  {"Key": "nope"}]})
    for d in result["Deleted"]:
        assert set(d) == {"Key"}, d  # no VersionId, DeleteMarker or DeleteMarkerVersionId


@pytest.mark.boto3
def test_suspended_bucket_still_names_the_null_version(s3, bucket):
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Suspended"})
    assert headers_of(s3.put_object(Bucket=bucket, Key="a", Body=b"1"))["x-amz-version-id"] == \
        "null"
    deleted = s3.delete_object(Bucket=bucket, Key="a")
    assert deleted["DeleteMarker"] is True and deleted["VersionId"] == "null"


def signed_put(server, path, body, headers):
    signer = s3sign.SigV4(ADMIN_AK, ADMIN_SK, server.region)
    return raw_exchange(server, s3sign.signed_request_bytes(
        signer, "PUT", server.netloc, path, body=body, extra_headers=headers))


def test_empty_content_md5_is_invalid_digest(server, s3, bucket):
    for path in (f"/{bucket}/k", ):
        resp = signed_put(server, path, b"data", {"content-md5": ""})
        assert (resp.status, resp.code) == (400, "InvalidDigest"), resp
    # A part too, and nothing was stored.
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="m")["UploadId"]
    signer = s3sign.SigV4(ADMIN_AK, ADMIN_SK, server.region)
    resp = raw_exchange(server, s3sign.signed_request_bytes(
        signer, "PUT", server.netloc, f"/{bucket}/m",
        query=[("partNumber", "1"), ("uploadId", upload_id)], body=b"part",
        extra_headers={"content-md5": ""}))
    assert (resp.status, resp.code) == (400, "InvalidDigest"), resp
    assert not s3.list_parts(Bucket=bucket, Key="m", UploadId=upload_id).get("Parts")
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)


@pytest.mark.boto3
def test_tags_with_empty_values(s3, bucket):
    s3.put_object(Bucket=bucket, Key="h", Body=b"x", Tagging="empty=&bare&set=1")
    got = s3.get_object_tagging(Bucket=bucket, Key="h")["TagSet"]
    assert sorted((t["Key"], t["Value"]) for t in got) == [("bare", ""), ("empty", ""),
                                                           ("set", "1")]
    s3.put_object_tagging(Bucket=bucket, Key="h", Tagging={"TagSet": [
        {"Key": "a", "Value": ""}, {"Key": "b", "Value": "2"}]})
    got = s3.get_object_tagging(Bucket=bucket, Key="h")["TagSet"]
    assert sorted((t["Key"], t["Value"]) for t in got) == [("a", ""), ("b", "2")]
    assert s3.head_object(Bucket=bucket, Key="h")["ResponseMetadata"]["HTTPHeaders"][
        "x-amz-tagging-count"] == "2"


@pytest.mark.parametrize("sent,stored", [
    ("aws-chunked", None),
    ("aws-chunked,gzip", "gzip"),
    ("aws-chunked, gzip", "gzip"),
    ("gzip,aws-chunked", "gzip"),
    ("aws-chunked,gzip,br", "gzip,br"),
])
def test_aws_chunked_is_not_stored_as_content_encoding(server, s3, bucket, sent, stored):
    signer = s3sign.SigV4(ADMIN_AK, ADMIN_SK, server.region)
    data = os.urandom(100_000)
    head, body = s3sign.streaming_put(signer, server.netloc, f"/{bucket}/enc", data,
                                      extra_headers={"content-encoding": sent})
    resp = raw_exchange(server, head + body)
    assert resp.status == 200, resp
    got = s3.head_object(Bucket=bucket, Key="enc")
    assert got.get("ContentEncoding") == stored, got["ResponseMetadata"]["HTTPHeaders"]
    # A copy with REPLACE and a GET both keep it so.
    assert s3.get_object(Bucket=bucket, Key="enc")["Body"].read() == data
