"""GetObjectAttributes: ETag (unquoted), Checksum, ObjectParts with paging, StorageClass and
ObjectSize of simple and multipart objects, versions and delete markers, conditions and
the x-amz-object-attributes errors."""
import base64
import datetime
import hashlib
import os
import struct
import zlib

import pytest

import s3sign
from conftest import ADMIN_AK, ADMIN_SK, raises_s3, raw_exchange

MiB = 1 << 20
ALL = ["ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize"]


def crc32_b64(data):
    return base64.b64encode(struct.pack(">I", zlib.crc32(data))).decode()


@pytest.mark.boto3
def test_simple_object(s3, bucket):
    body = b"hello attributes"
    s3.put_object(Bucket=bucket, Key="k", Body=body)
    head = s3.head_object(Bucket=bucket, Key="k")
    resp = s3.get_object_attributes(Bucket=bucket, Key="k", ObjectAttributes=ALL)
    assert resp["ETag"] == hashlib.md5(body).hexdigest()  # no quotes
    assert resp["ObjectSize"] == len(body)
    assert resp["StorageClass"] == "STANDARD"
    assert resp["LastModified"] == head["LastModified"]
    assert "ObjectParts" not in resp  # not a multipart object
    assert "VersionId" not in resp  # unversioned bucket

    only = s3.get_object_attributes(Bucket=bucket, Key="k", ObjectAttributes=["ObjectSize"])
    assert only["ObjectSize"] == len(body)
    assert "ETag" not in only and "StorageClass" not in only and "Checksum" not in only


@pytest.mark.boto3
@pytest.mark.needs_new_boto3
def test_simple_object_checksums(s3, bucket, server, client_factory):
    body = b"checksummed"
    s3.put_object(Bucket=bucket, Key="crc32", Body=body, ChecksumAlgorithm="CRC32")
    resp = s3.get_object_attributes(Bucket=bucket, Key="crc32", ObjectAttributes=["Checksum"])
    assert resp["Checksum"] == {"ChecksumCRC32": crc32_b64(body), "ChecksumType": "FULL_OBJECT"}
    sha = base64.b64encode(hashlib.sha256(body).digest()).decode()
    s3.put_object(Bucket=bucket, Key="sha", Body=body, ChecksumSHA256=sha)
    resp = s3.get_object_attributes(Bucket=bucket, Key="sha", ObjectAttributes=["Checksum"])
    assert resp["Checksum"]["ChecksumSHA256"] == sha
    # Without a requested algorithm the object still has the CRC64NVME S3 gives every object
    # (new botocore sends a CRC32 unless told to checksum only when required).
    plain = client_factory(server, request_checksum_calculation="when_required")
    plain.put_object(Bucket=bucket, Key="plain", Body=body)
    resp = s3.get_object_attributes(Bucket=bucket, Key="plain", ObjectAttributes=["Checksum"])
    head = s3.head_object(Bucket=bucket, Key="plain", ChecksumMode="ENABLED")
    assert resp["Checksum"]["ChecksumCRC64NVME"] == head["ChecksumCRC64NVME"]
    assert resp["Checksum"]["ChecksumType"] == "FULL_OBJECT"


def upload(s3, bucket, key, parts, **create_kw):
    checksum = create_kw.get("ChecksumAlgorithm")
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key=key, **create_kw)["UploadId"]
    done = []
    for number, body in enumerate(parts, start=1):
        kw = {"ChecksumAlgorithm": checksum} if checksum else {}
        resp = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number,
                              Body=body, **kw)
        entry = {"PartNumber": number, "ETag": resp["ETag"]}
        if checksum:
            entry["Checksum" + checksum] = resp["Checksum" + checksum]
        done.append(entry)
    return s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id,
                                        MultipartUpload={"Parts": done})


@pytest.mark.boto3
@pytest.mark.needs_new_boto3
def test_multipart_with_checksums_and_paging(s3, bucket):
    parts = [os.urandom(5 * MiB), os.urandom(5 * MiB), os.urandom(5 * MiB), b"last part"]
    done = upload(s3, bucket, "mpu", parts, ChecksumAlgorithm="CRC32")
    resp = s3.get_object_attributes(Bucket=bucket, Key="mpu", ObjectAttributes=ALL)
    assert resp["ETag"] == done["ETag"].strip('"')
    assert resp["ETag"].endswith("-4")
    assert resp["ObjectSize"] == sum(map(len, parts))
    assert resp["Checksum"]["ChecksumCRC32"] == done["ChecksumCRC32"]
    assert resp["Checksum"]["ChecksumType"] == "COMPOSITE"
    op = resp["ObjectParts"]
    assert op["TotalPartsCount"] == 4
    assert op["IsTruncated"] is False
    assert op["MaxParts"] == 1000
    assert op["PartNumberMarker"] == 0
    assert [(p["PartNumber"], p["Size"], p["ChecksumCRC32"]) for p in op["Parts"]] == [
        (i + 1, len(p), crc32_b64(p)) for i, p in enumerate(parts)]

    # Paging: two parts at a time.
    page = s3.get_object_attributes(Bucket=bucket, Key="mpu", ObjectAttributes=["ObjectParts"],
                                    MaxParts=2)["ObjectParts"]
    assert [p["PartNumber"] for p in page["Parts"]] == [1, 2]
    assert page["IsTruncated"] is True and page["NextPartNumberMarker"] == 2
    assert page["MaxParts"] == 2 and page["TotalPartsCount"] == 4
    page = s3.get_object_attributes(Bucket=bucket, Key="mpu", ObjectAttributes=["ObjectParts"],
                                    MaxParts=2, PartNumberMarker=2)["ObjectParts"]
    assert [p["PartNumber"] for p in page["Parts"]] == [3, 4]
    assert page["IsTruncated"] is False and page["PartNumberMarker"] == 2
    assert page["NextPartNumberMarker"] == 4
    page = s3.get_object_attributes(Bucket=bucket, Key="mpu", ObjectAttributes=["ObjectParts"],
                                    PartNumberMarker=4)["ObjectParts"]
    assert page.get("Parts", []) == [] and page["IsTruncated"] is False


@pytest.mark.boto3
def test_multipart_without_checksum_counts_parts(s3, bucket):
    parts = [os.urandom(5 * MiB), b"tail"]
    upload(s3, bucket, "mpu", parts)
    resp = s3.get_object_attributes(Bucket=bucket, Key="mpu",
                                    ObjectAttributes=["ObjectParts", "ObjectSize"])
    assert resp["ObjectSize"] == 5 * MiB + 4
    assert resp["ObjectParts"]["TotalPartsCount"] == 2
    # S3 lists the parts only for objects uploaded with an additional checksum.
    assert "Parts" not in resp["ObjectParts"]


@pytest.mark.boto3
def test_versions_and_delete_markers(s3, bucket):
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    v1 = s3.put_object(Bucket=bucket, Key="k", Body=b"one",
                       StorageClass="STANDARD_IA")["VersionId"]
    v2 = s3.put_object(Bucket=bucket, Key="k", Body=b"second")["VersionId"]
    resp = s3.get_object_attributes(Bucket=bucket, Key="k", ObjectAttributes=ALL)
    assert resp["VersionId"] == v2 and resp["ObjectSize"] == 6
    resp = s3.get_object_attributes(Bucket=bucket, Key="k", VersionId=v1, ObjectAttributes=ALL)
    assert resp["VersionId"] == v1 and resp["ObjectSize"] == 3
    assert resp["StorageClass"] == "STANDARD_IA"
    with raises_s3("NoSuchVersion", 404):
        s3.get_object_attributes(Bucket=bucket, Key="k", VersionId="0123456789abcdef",
                                 ObjectAttributes=ALL)

    marker = s3.delete_object(Bucket=bucket, Key="k")["VersionId"]
    with raises_s3("NoSuchKey", 404) as info:
        s3.get_object_attributes(Bucket=bucket, Key="k", ObjectAttributes=ALL)
    headers = info.value.response["ResponseMetadata"]["HTTPHeaders"]
    assert headers["x-amz-delete-marker"] == "true"
    assert headers["x-amz-version-id"] == marker
    with raises_s3("MethodNotAllowed", 405) as info:
        s3.get_object_attributes(Bucket=bucket, Key="k", VersionId=marker, ObjectAttributes=ALL)
    headers = info.value.response["ResponseMetadata"]["HTTPHeaders"]
    assert headers["x-amz-delete-marker"] == "true" and "last-modified" in headers


@pytest.mark.boto3
def test_errors(s3, bucket):
    with raises_s3("NoSuchKey", 404):
        s3.get_object_attributes(Bucket=bucket, Key="missing", ObjectAttributes=ALL)
    with raises_s3("NoSuchBucket", 404):
        s3.get_object_attributes(Bucket=bucket + "-nope", Key="k", ObjectAttributes=ALL)
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    with raises_s3("InvalidArgument", 400):
        s3.get_object_attributes(Bucket=bucket, Key="k", ObjectAttributes=["Bogus"])
    with raises_s3("InvalidArgument", 400):
        s3.get_object_attributes(Bucket=bucket, Key="k", ObjectAttributes=[])


def test_raw_header_errors(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    signer = s3sign.SigV4(ADMIN_AK, ADMIN_SK, server.region)
    cases = [
        ({}, 400, "InvalidArgument"),  # no x-amz-object-attributes
        ({"x-amz-object-attributes": ""}, 400, "InvalidArgument"),
        ({"x-amz-object-attributes": "ETag,Nope"}, 400, "InvalidArgument"),
        ({"x-amz-object-attributes": "ETag", "x-amz-max-parts": "-1"}, 400, "InvalidArgument"),
        ({"x-amz-object-attributes": "ETag", "x-amz-part-number-marker": "x"}, 400,
         "InvalidArgument"),
    ]
    for headers, status, code in cases:
        req = s3sign.signed_request_bytes(signer, "GET", server.netloc, f"/{bucket}/k",
                                          query=[("attributes", "")], extra_headers=headers)
        resp = raw_exchange(server, req)
        assert resp is not None
        assert (resp.status, resp.code) == (status, code), (headers, resp)
    req = s3sign.signed_request_bytes(signer, "GET", server.netloc, f"/{bucket}/k",
                                      query=[("attributes", "")],
                                      extra_headers={"x-amz-object-attributes": "ETag, ObjectSize"})
    resp = raw_exchange(server, req)
    assert resp.status == 200, resp
    assert b"<ObjectSize>1</ObjectSize>" in resp.body and b"<ETag>" in resp.body


@pytest.mark.boto3
def test_conditions(s3, bucket):
    """If-Match and friends apply as on HEAD (412, 304)."""
    put = s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    client = s3

    def with_header(name, value):
        def add(request, **_):
            request.headers[name] = value
        client.meta.events.register_first("before-sign.s3.GetObjectAttributes", add)
        try:
            return client.get_object_attributes(Bucket=bucket, Key="k", ObjectAttributes=["ETag"])
        finally:
            client.meta.events.unregister("before-sign.s3.GetObjectAttributes", add)

    assert with_header("If-Match", put["ETag"])["ETag"] == put["ETag"].strip('"')
    with raises_s3("PreconditionFailed", 412):
        with_header("If-Match", '"0123"')
    future = (datetime.datetime.utcnow() + datetime.timedelta(days=1)).strftime(
        "%a, %d %b %Y %H:%M:%S GMT")
    with raises_s3("304", 304):
        with_header("If-Modified-Since", future)
