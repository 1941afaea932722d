"""Object and bucket tagging: Put/Get/DeleteObjectTagging (by versionId too), x-amz-tagging
on PutObject, CreateMultipartUpload and CopyObject (x-amz-tagging-directive),
x-amz-tagging-count, S3's limits and error codes, and Put/Get/DeleteBucketTagging."""
import os
import urllib.parse

import pytest

import s3sign
from conftest import ADMIN_AK, ADMIN_SK, raises_s3, raw_exchange

MiB = 1 << 20


def tagset(d):
    return [{"Key": k, "Value": v} for k, v in d.items()]


def tag_count(resp):
    """x-amz-tagging-count as a number, 0 when absent (botocore 1.26 does not map it on
    HEAD)."""
    return int(resp["ResponseMetadata"]["HTTPHeaders"].get("x-amz-tagging-count", "0"))


def tags_of(s3, bucket, key, **kw):
    resp = s3.get_object_tagging(Bucket=bucket, Key=key, **kw)
    return {t["Key"]: t["Value"] for t in resp["TagSet"]}


@pytest.mark.boto3
def test_put_get_delete_object_tags(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="k", Body=b"data")
    head = s3.head_object(Bucket=bucket, Key="k")
    assert tags_of(s3, bucket, "k") == {}
    assert tag_count(head) == 0

    tags = {"project": "blue", "empty": "", "café": "naïve €", "path": "a/b:c=d+e-f@g_h.i"}
    s3.put_object_tagging(Bucket=bucket, Key="k", Tagging={"TagSet": tagset(tags)})
    resp = s3.get_object_tagging(Bucket=bucket, Key="k")
    assert [(t["Key"], t["Value"]) for t in resp["TagSet"]] == list(tags.items())  # kept in order
    assert tag_count(s3.head_object(Bucket=bucket, Key="k")) == 4
    assert tag_count(s3.get_object(Bucket=bucket, Key="k")) == 4

    # Tagging changes neither the bytes, the ETag nor Last-Modified.
    after = s3.head_object(Bucket=bucket, Key="k")
    assert after["ETag"] == put["ETag"] == head["ETag"]
    assert after["LastModified"] == head["LastModified"]
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"data"

    # A second put replaces the whole set.
    s3.put_object_tagging(Bucket=bucket, Key="k", Tagging={"TagSet": tagset({"only": "one"})})
    assert tags_of(s3, bucket, "k") == {"only": "one"}

    s3.delete_object_tagging(Bucket=bucket, Key="k")
    assert tags_of(s3, bucket, "k") == {}
    assert tag_count(s3.head_object(Bucket=bucket, Key="k")) == 0

    # Overwriting the object drops its tags (a new object).
    s3.put_object_tagging(Bucket=bucket, Key="k", Tagging={"TagSet": tagset({"a": "1"})})
    s3.put_object(Bucket=bucket, Key="k", Body=b"new")
    assert tags_of(s3, bucket, "k") == {}


@pytest.mark.boto3
def test_tags_on_put_object(s3, bucket):
    header = urllib.parse.urlencode({"k1": "v 1", "k2": "", "k/3": "a=b"})
    s3.put_object(Bucket=bucket, Key="k", Body=b"x", Tagging=header)
    assert tags_of(s3, bucket, "k") == {"k1": "v 1", "k2": "", "k/3": "a=b"}
    assert tag_count(s3.head_object(Bucket=bucket, Key="k")) == 3


@pytest.mark.boto3
def test_tags_on_multipart_upload(s3, bucket):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="mpu",
                                           Tagging="team=ml&stage=raw")["UploadId"]
    parts = [os.urandom(5 * MiB), b"tail"]
    done = []
    for number, body in enumerate(parts, start=1):
        resp = s3.upload_part(Bucket=bucket, Key="mpu", UploadId=upload_id, PartNumber=number,
                              Body=body)
        done.append({"PartNumber": number, "ETag": resp["ETag"]})
    s3.complete_multipart_upload(Bucket=bucket, Key="mpu", UploadId=upload_id,
                                 MultipartUpload={"Parts": done})
    assert tags_of(s3, bucket, "mpu") == {"team": "ml", "stage": "raw"}
    assert tag_count(s3.head_object(Bucket=bucket, Key="mpu")) == 2
    with raises_s3("BadRequest", 400):
        s3.create_multipart_upload(Bucket=bucket, Key="mpu2",
                                   Tagging="&".join(f"k{i}=v" for i in range(11)))


@pytest.mark.boto3
def test_copy_tagging_directive(s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"payload", Tagging="a=1&b=2")
    src = {"Bucket": bucket, "Key": "src"}
    s3.copy_object(Bucket=bucket, Key="default", CopySource=src)
    assert tags_of(s3, bucket, "default") == {"a": "1", "b": "2"}
    s3.copy_object(Bucket=bucket, Key="copy", CopySource=src, TaggingDirective="COPY",
                   Tagging="ignored=yes")
    assert tags_of(s3, bucket, "copy") == {"a": "1", "b": "2"}
    s3.copy_object(Bucket=bucket, Key="replace", CopySource=src, TaggingDirective="REPLACE",
                   Tagging="c=3")
    assert tags_of(s3, bucket, "replace") == {"c": "3"}
    s3.copy_object(Bucket=bucket, Key="none", CopySource=src, TaggingDirective="REPLACE")
    assert tags_of(s3, bucket, "none") == {}
    # Metadata REPLACE alone keeps copying the tags.
    s3.copy_object(Bucket=bucket, Key="meta", CopySource=src, MetadataDirective="REPLACE",
                   Metadata={"m": "1"})
    assert tags_of(s3, bucket, "meta") == {"a": "1", "b": "2"}
    with raises_s3("InvalidArgument", 400):
        s3.copy_object(Bucket=bucket, Key="bad", CopySource=src, TaggingDirective="MERGE")
    with raises_s3("InvalidTag", 400):
        s3.copy_object(Bucket=bucket, Key="bad", CopySource=src, TaggingDirective="REPLACE",
                       Tagging="aws:x=1")


@pytest.mark.boto3
def test_versioned_tagging(s3, bucket):
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    v1 = s3.put_object(Bucket=bucket, Key="k", Body=b"one", Tagging="gen=1")["VersionId"]
    v2 = s3.put_object(Bucket=bucket, Key="k", Body=b"two")["VersionId"]
    before = s3.list_object_versions(Bucket=bucket)["Versions"]

    resp = s3.put_object_tagging(Bucket=bucket, Key="k", VersionId=v1,
                                 Tagging={"TagSet": tagset({"gen": "first"})})
    assert resp["VersionId"] == v1
    resp = s3.put_object_tagging(Bucket=bucket, Key="k",
                                 Tagging={"TagSet": tagset({"gen": "second"})})
    assert resp["VersionId"] == v2  # the current version
    assert tags_of(s3, bucket, "k", VersionId=v1) == {"gen": "first"}
    got = s3.get_object_tagging(Bucket=bucket, Key="k")
    assert got["VersionId"] == v2
    assert {t["Key"]: t["Value"] for t in got["TagSet"]} == {"gen": "second"}

    # No new version; ETags and dates unchanged.
    after = s3.list_object_versions(Bucket=bucket)["Versions"]
    strip = [(v["VersionId"], v["ETag"], v["LastModified"], v["IsLatest"]) for v in before]
    assert [(v["VersionId"], v["ETag"], v["LastModified"], v["IsLatest"]) for v in after] == strip

    resp = s3.delete_object_tagging(Bucket=bucket, Key="k", VersionId=v1)
    assert resp["VersionId"] == v1
    assert tags_of(s3, bucket, "k", VersionId=v1) == {}
    assert tags_of(s3, bucket, "k") == {"gen": "second"}

    with raises_s3("NoSuchVersion", 404):
        s3.get_object_tagging(Bucket=bucket, Key="k", VersionId="0123456789abcdef")
    with raises_s3("NoSuchVersion", 404):
        s3.put_object_tagging(Bucket=bucket, Key="k", VersionId="0123456789abcdef",
                              Tagging={"TagSet": []})

    # A delete marker has no tags: 405 both by id and as the current version.
    marker = s3.delete_object(Bucket=bucket, Key="k")["VersionId"]
    with raises_s3("MethodNotAllowed", 405):
        s3.get_object_tagging(Bucket=bucket, Key="k")
    with raises_s3("MethodNotAllowed", 405):
        s3.get_object_tagging(Bucket=bucket, Key="k", VersionId=marker)
    with raises_s3("MethodNotAllowed", 405):
        s3.put_object_tagging(Bucket=bucket, Key="k", VersionId=marker,
                              Tagging={"TagSet": tagset({"a": "b"})})
    with raises_s3("MethodNotAllowed", 405):
        s3.delete_object_tagging(Bucket=bucket, Key="k")
    # The versions under it are still taggable by id.
    s3.put_object_tagging(Bucket=bucket, Key="k", VersionId=v2,
                          Tagging={"TagSet": tagset({"still": "here"})})
    assert tags_of(s3, bucket, "k", VersionId=v2) == {"still": "here"}


@pytest.mark.boto3
def test_object_tagging_errors(s3, bucket):
    with raises_s3("NoSuchKey", 404):
        s3.get_object_tagging(Bucket=bucket, Key="missing")
    with raises_s3("NoSuchKey", 404):
        s3.put_object_tagging(Bucket=bucket, Key="missing", Tagging={"TagSet": []})
    with raises_s3("NoSuchKey", 404):
        s3.delete_object_tagging(Bucket=bucket, Key="missing")
    with raises_s3("NoSuchBucket", 404):
        s3.get_object_tagging(Bucket=bucket + "-nope", Key="k")

    s3.put_object(Bucket=bucket, Key="k", Body=b"x", Tagging="keep=me")
    eleven = {f"k{i}": "v" for i in range(11)}
    bad = [
        ("BadRequest", [{"Key": f"k{i}", "Value": "v"} for i in range(11)]),
        ("InvalidTag", [{"Key": "a", "Value": "1"}, {"Key": "a", "Value": "2"}]),
        ("InvalidTag", [{"Key": "k" * 129, "Value": "v"}]),
        ("InvalidTag", [{"Key": "k", "Value": "v" * 257}]),
        ("InvalidTag", [{"Key": "aws:reserved", "Value": "v"}]),
        ("InvalidTag", [{"Key": "k", "Value": "a,b"}]),
    ]
    for code, tag_set in bad:
        with raises_s3(code, 400):
            s3.put_object_tagging(Bucket=bucket, Key="k", Tagging={"TagSet": tag_set})
    # Limits count characters, not bytes.
    s3.put_object_tagging(Bucket=bucket, Key="k",
                          Tagging={"TagSet": [{"Key": "é" * 128, "Value": "€" * 256}]})
    assert tags_of(s3, bucket, "k") == {"é" * 128: "€" * 256}
    # Ten is fine.
    s3.put_object_tagging(Bucket=bucket, Key="k",
                          Tagging={"TagSet": tagset({f"k{i}": "v" for i in range(10)})})
    assert len(tags_of(s3, bucket, "k")) == 10

    with raises_s3("BadRequest", 400):
        s3.put_object(Bucket=bucket, Key="k2", Body=b"x", Tagging=urllib.parse.urlencode(eleven))
    with raises_s3("InvalidArgument", 400):
        s3.put_object(Bucket=bucket, Key="k2", Body=b"x", Tagging="a=1&a=2")
    with raises_s3("InvalidTag", 400):
        s3.put_object(Bucket=bucket, Key="k2", Body=b"x", Tagging="k=" + "v" * 257)
    with raises_s3("InvalidTag", 400):
        s3.put_object(Bucket=bucket, Key="k2", Body=b"x", Tagging="=v")  # empty key
    with raises_s3("NoSuchKey", 404):  # nothing was written (GET: HEAD errors have no body)
        s3.get_object(Bucket=bucket, Key="k2")


def test_malformed_tagging_xml(server, bucket, s3):
    signer = s3sign.SigV4(ADMIN_AK, ADMIN_SK, server.region)
    s3.put_object(Bucket=bucket, Key="k", Body=b"x", Tagging="keep=me")
    for path in (f"/{bucket}/k", f"/{bucket}"):
        for body in (b"<Tagging><TagSet><Tag><Key>a</Key></Tag></TagSet></Tagging>",
                     b"<Tagging>", b"not xml", b"<Tagging></Tagging>",
                     b"<Tagging><TagSet/></Tagging>" + b" " * (300 * 1024)):
            req = s3sign.signed_request_bytes(signer, "PUT", server.netloc, path,
                                              query=[("tagging", "")], body=body)
            resp = raw_exchange(server, req)
            assert resp is not None
            assert (resp.status, resp.code) == (400, "MalformedXML"), (path, body[:40], resp)
    assert tags_of(s3, bucket, "k") == {"keep": "me"}


@pytest.mark.boto3
def test_bucket_tagging(s3, bucket):
    with raises_s3("NoSuchTagSet", 404):
        s3.get_bucket_tagging(Bucket=bucket)
    tags = {"team": "ml", "cost-center": "42", "empty": ""}
    resp = s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": tagset(tags)})
    assert resp["ResponseMetadata"]["HTTPStatusCode"] == 204
    got = s3.get_bucket_tagging(Bucket=bucket)["TagSet"]
    assert {t["Key"]: t["Value"] for t in got} == tags
    # Bucket tags leave versioning and objects alone.
    assert "Status" not in s3.get_bucket_versioning(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    assert tags_of(s3, bucket, "k") == {}

    fifty = {f"k{i}": "v" for i in range(50)}
    s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": tagset(fifty)})
    assert len(s3.get_bucket_tagging(Bucket=bucket)["TagSet"]) == 50
    with raises_s3("BadRequest", 400):
        s3.put_bucket_tagging(Bucket=bucket,
                              Tagging={"TagSet": tagset({f"k{i}": "v" for i in range(51)})})
    with raises_s3("InvalidTag", 400):
        s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": [{"Key": "a", "Value": "1"},
                                                                 {"Key": "a", "Value": "2"}]})
    assert len(s3.get_bucket_tagging(Bucket=bucket)["TagSet"]) == 50

    resp = s3.delete_bucket_tagging(Bucket=bucket)
    assert resp["ResponseMetadata"]["HTTPStatusCode"] == 204
    with raises_s3("NoSuchTagSet", 404):
        s3.get_bucket_tagging(Bucket=bucket)
    with raises_s3("NoSuchBucket", 404):
        s3.get_bucket_tagging(Bucket=bucket + "-nope")


@pytest.mark.boto3
def test_tagging_is_owner_only(s3, s3_other, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x", Tagging="a=1")
    s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": tagset({"b": "2"})})
    with raises_s3("AccessDenied", 403):
        s3_other.get_bucket_tagging(Bucket=bucket)
    with raises_s3("AccessDenied", 403):
        s3_other.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": []})
    with raises_s3("AccessDenied", 403):
        s3_other.delete_bucket_tagging(Bucket=bucket)
    with raises_s3("AccessDenied", 403):
        s3_other.get_object_tagging(Bucket=bucket, Key="k")
    with raises_s3("AccessDenied", 403):
        s3_other.put_object_tagging(Bucket=bucket, Key="k", Tagging={"TagSet": []})
    assert tags_of(s3, bucket, "k") == {"a": "1"}
    assert s3.get_bucket_tagging(Bucket=bucket)["TagSet"] == [{"Key": "b", "Value": "2"}]
