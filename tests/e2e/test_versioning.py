"""Bucket versioning: Put/GetBucketVersioning, versions and delete markers, GET/HEAD/
DELETE by versionId, ListObjectVersions with paging, Suspended and the null version."""
import botocore.exceptions
import pytest

from conftest import raises_s3


def enable(s3, bucket, status="Enabled"):
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": status})


def versions_of(s3, bucket, **kw):
    resp = s3.list_object_versions(Bucket=bucket, **kw)
    rows = [("V", v["Key"], v["VersionId"], v["IsLatest"]) for v in resp.get("Versions", [])]
    rows += [("M", m["Key"], m["VersionId"], m["IsLatest"]) for m in resp.get("DeleteMarkers", [])]
    return resp, rows


@pytest.mark.boto3
def test_versioning_configuration(s3, bucket):
    assert "Status" not in s3.get_bucket_versioning(Bucket=bucket)
    enable(s3, bucket)
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
    enable(s3, bucket, "Suspended")
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Suspended"
    with raises_s3("MalformedXML", 400):
        enable(s3, bucket, "Off")


@pytest.mark.boto3
def test_unversioned_bucket_has_null_version_only(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="k", Body=b"v1")
    assert "VersionId" not in put
    assert s3.get_object(Bucket=bucket, Key="k", VersionId="null")["Body"].read() == b"v1"
    _, rows = versions_of(s3, bucket)
    assert rows == [("V", "k", "null", True)]
    with raises_s3("NoSuchVersion", 404):
        s3.get_object(Bucket=bucket, Key="k", VersionId="0123456789abcdef")


@pytest.mark.boto3
def test_versions_and_delete_markers(s3, bucket):
    enable(s3, bucket)
    v1 = s3.put_object(Bucket=bucket, Key="k", Body=b"one")["VersionId"]
    v2 = s3.put_object(Bucket=bucket, Key="k", Body=b"two")["VersionId"]
    assert v1 != v2 and "null" not in (v1, v2)
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"two"
    got = s3.get_object(Bucket=bucket, Key="k", VersionId=v1)
    assert got["Body"].read() == b"one" and got["VersionId"] == v1
    assert s3.head_object(Bucket=bucket, Key="k", VersionId=v2)["ContentLength"] == 3
    _, rows = versions_of(s3, bucket)
    assert rows == [("V", "k", v2, True), ("V", "k", v1, False)]

    deleted = s3.delete_object(Bucket=bucket, Key="k")
    assert deleted["DeleteMarker"] is True
    marker = deleted["VersionId"]
    with raises_s3("NoSuchKey", 404) as info:
        s3.get_object(Bucket=bucket, Key="k")
    headers = info.value.response["ResponseMetadata"]["HTTPHeaders"]
    assert headers["x-amz-delete-marker"] == "true" and headers["x-amz-version-id"] == marker
    with raises_s3("MethodNotAllowed", 405):
        s3.get_object(Bucket=bucket, Key="k", VersionId=marker)
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)
    _, rows = versions_of(s3, bucket)
    assert sorted(rows) == sorted([("M", "k", marker, True), ("V", "k", v2, False),
                                   ("V", "k", v1, False)])
    assert s3.get_object(Bucket=bucket, Key="k", VersionId=v1)["Body"].read() == b"one"

    # Removing the marker brings the key back; removing a version is for good.
    undo = s3.delete_object(Bucket=bucket, Key="k", VersionId=marker)
    assert undo["DeleteMarker"] is True and undo["VersionId"] == marker
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"two"
    s3.delete_object(Bucket=bucket, Key="k", VersionId=v2)
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"one"
    with raises_s3("NoSuchVersion", 404):
        s3.get_object(Bucket=bucket, Key="k", VersionId=v2)
    s3.delete_object(Bucket=bucket, Key="k", VersionId=v1)
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket=bucket, Key="k")


@pytest.mark.boto3
def test_suspended_writes_the_null_version(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"before")  # the null version
    enable(s3, bucket)
    v1 = s3.put_object(Bucket=bucket, Key="k", Body=b"enabled")["VersionId"]
    enable(s3, bucket, "Suspended")
    put = s3.put_object(Bucket=bucket, Key="k", Body=b"suspended 1")
    assert put["VersionId"] == "null"
    s3.put_object(Bucket=bucket, Key="k", Body=b"suspended 2")
    _, rows = versions_of(s3, bucket)
    assert rows == [("V", "k", "null", True), ("V", "k", v1, False)], "null replaced, v1 kept"
    assert s3.get_object(Bucket=bucket, Key="k", VersionId="null")["Body"].read() == b"suspended 2"
    marker = s3.delete_object(Bucket=bucket, Key="k")
    assert marker["DeleteMarker"] is True and marker["VersionId"] == "null"
    _, rows = versions_of(s3, bucket)
    assert rows == [("V", "k", v1, False), ("M", "k", "null", True)]


@pytest.mark.boto3
def test_list_object_versions_paging(s3, bucket):
    enable(s3, bucket)
    expected = []
    for key in ("a", "b", "c"):
        ids = [s3.put_object(Bucket=bucket, Key=key, Body=b"x")["VersionId"] for _ in range(3)]
        expected += [(key, v) for v in reversed(ids)]
    seen = []
    kw = {"MaxKeys": 2}
    while True:
        resp = s3.list_object_versions(Bucket=bucket, **kw)
        seen += [(v["Key"], v["VersionId"]) for v in resp.get("Versions", [])]
        if not resp["IsTruncated"]:
            break
        kw = {"MaxKeys": 2, "KeyMarker": resp["NextKeyMarker"],
              "VersionIdMarker": resp["NextVersionIdMarker"]}
    assert seen == expected
    rolled = s3.list_object_versions(Bucket=bucket, Prefix="b")
    assert [v["IsLatest"] for v in rolled["Versions"]] == [True, False, False]


@pytest.mark.boto3
def test_delete_objects_and_copy_by_version(s3, bucket):
    enable(s3, bucket)
    v1 = s3.put_object(Bucket=bucket, Key="k", Body=b"one")["VersionId"]
    s3.put_object(Bucket=bucket, Key="k", Body=b"two")
    copied = s3.copy_object(Bucket=bucket, Key="copy",
                            CopySource={"Bucket": bucket, "Key": "k", "VersionId": v1})
    assert copied["CopySourceVersionId"] == v1 and copied["VersionId"] not in (v1, "null")
    assert s3.get_object(Bucket=bucket, Key="copy")["Body"].read() == b"one"
    resp = s3.delete_objects(Bucket=bucket, Delete={"Objects": [
        {"Key": "k", "VersionId": v1}, {"Key": "copy"}]})
    by_key = {d["Key"]: d for d in resp["Deleted"]}
    assert by_key["k"]["VersionId"] == v1
    assert by_key["copy"]["DeleteMarker"] is True and by_key["copy"]["DeleteMarkerVersionId"]
    with raises_s3("NoSuchVersion", 404):
        s3.get_object(Bucket=bucket, Key="k", VersionId=v1)
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"two"


@pytest.mark.boto3
def test_versioned_bucket_is_not_empty_until_every_version_is_gone(s3):
    from conftest import unique_bucket
    name = unique_bucket()
    s3.create_bucket(Bucket=name)
    enable(s3, name)
    v = s3.put_object(Bucket=name, Key="k", Body=b"x")["VersionId"]
    marker = s3.delete_object(Bucket=name, Key="k")["VersionId"]
    with raises_s3("BucketNotEmpty", 409):
        s3.delete_bucket(Bucket=name)
    s3.delete_object(Bucket=name, Key="k", VersionId=v)
    s3.delete_object(Bucket=name, Key="k", VersionId=marker)
    s3.delete_bucket(Bucket=name)
