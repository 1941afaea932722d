"""Multipart uploads: Create, UploadPart, UploadPartCopy, Complete, Abort, ListParts,
ListMultipartUploads, GET ?partNumber, composite and full-object checksums, and the rules
S3 enforces on completion."""
import base64
import hashlib
import os
import struct
import zlib

import boto3.s3.transfer
import pytest

from conftest import raises_s3

MiB = 1 << 20


def md5_hex(data):
    return hashlib.md5(data).hexdigest()


def multipart_etag(parts):
    return hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest() + \
        f"-{len(parts)}"


def crc32_b64(data):
    return base64.b64encode(struct.pack(">I", zlib.crc32(data))).decode()


def upload_parts(s3, bucket, key, parts, **create_kw):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key=key, **create_kw)["UploadId"]
    done = []
    for number, body in enumerate(parts, start=1):
        resp = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number,
                              Body=body)
        done.append({"PartNumber": number, "ETag": resp["ETag"]})
    return upload_id, done


@pytest.mark.boto3
def test_parts_become_one_object(s3, bucket):
    parts = [os.urandom(5 * MiB), os.urandom(5 * MiB), os.urandom(MiB + 7)]
    upload_id, done = upload_parts(s3, bucket, "big/obj", parts, ContentType="text/x-test",
                                   Metadata={"origin": "mpu"})
    listed = s3.list_parts(Bucket=bucket, Key="big/obj", UploadId=upload_id)
    assert [(p["PartNumber"], p["Size"], p["ETag"]) for p in listed["Parts"]] == [
        (i + 1, len(p), f'"{md5_hex(p)}"') for i, p in enumerate(parts)]
    resp = s3.complete_multipart_upload(Bucket=bucket, Key="big/obj", UploadId=upload_id,
                                        MultipartUpload={"Parts": done})
    assert resp["ETag"] == f'"{multipart_etag(parts)}"'
    whole = b"".join(parts)
    got = s3.get_object(Bucket=bucket, Key="big/obj")
    assert got["Body"].read() == whole
    assert got["ContentType"] == "text/x-test"
    assert got["Metadata"] == {"origin": "mpu"}
    assert got["ETag"] == resp["ETag"]
    ranged = s3.get_object(Bucket=bucket, Key="big/obj", Range=f"bytes={5 * MiB - 3}-{5 * MiB + 2}")
    assert ranged["Body"].read() == whole[5 * MiB - 3:5 * MiB + 3], "a range across two parts"
    listing = s3.list_objects_v2(Bucket=bucket)["Contents"]
    assert [(o["Key"], o["Size"]) for o in listing] == [("big/obj", len(whole))]
    assert not s3.list_multipart_uploads(Bucket=bucket).get("Uploads")


@pytest.mark.boto3
def test_get_by_part_number(s3, bucket):
    parts = [os.urandom(5 * MiB), os.urandom(1000)]
    upload_id, done = upload_parts(s3, bucket, "k", parts)
    s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id,
                                 MultipartUpload={"Parts": done})
    second = s3.get_object(Bucket=bucket, Key="k", PartNumber=2)
    assert second["Body"].read() == parts[1]
    assert second["PartsCount"] == 2
    assert second["ContentRange"] == f"bytes {5 * MiB}-{5 * MiB + 999}/{5 * MiB + 1000}"
    head = s3.head_object(Bucket=bucket, Key="k", PartNumber=1)
    assert head["ContentLength"] == 5 * MiB and head["PartsCount"] == 2
    with raises_s3("InvalidPartNumber", 416):
        s3.get_object(Bucket=bucket, Key="k", PartNumber=3)
    s3.put_object(Bucket=bucket, Key="single", Body=b"hello")
    assert s3.get_object(Bucket=bucket, Key="single", PartNumber=1)["Body"].read() == b"hello"


@pytest.mark.boto3
def test_transfer_manager_round_trip(s3, bucket, tmp_path):
    src = tmp_path / "src.bin"
    data = os.urandom(23 * MiB + 5)
    src.write_bytes(data)
    config = boto3.s3.transfer.TransferConfig(multipart_threshold=5 * MiB,
                                              multipart_chunksize=5 * MiB, max_concurrency=4)
    s3.upload_file(str(src), bucket, "t/file.bin", Config=config)
    head = s3.head_object(Bucket=bucket, Key="t/file.bin")
    assert head["ContentLength"] == len(data)
    assert head["ETag"].endswith('-5"')
    dst = tmp_path / "dst.bin"
    s3.download_file(bucket, "t/file.bin", str(dst), Config=config)
    assert hashlib.sha256(dst.read_bytes()).digest() == hashlib.sha256(data).digest()


@pytest.mark.boto3
def test_part_overwrite_and_unused_parts(s3, bucket):
    upload_id, done = upload_parts(s3, bucket, "k", [os.urandom(5 * MiB), b"old last"])
    again = s3.upload_part(Bucket=bucket, Key="k", UploadId=upload_id, PartNumber=2,
                           Body=b"new last")
    s3.upload_part(Bucket=bucket, Key="k", UploadId=upload_id, PartNumber=3, Body=b"unused")
    listed = s3.list_parts(Bucket=bucket, Key="k", UploadId=upload_id)["Parts"]
    assert [p["Size"] for p in listed] == [5 * MiB, 8, 6]
    with raises_s3("InvalidPart", 400):  # the replaced part's ETag no longer counts
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id,
                                     MultipartUpload={"Parts": done})
    done[1]["ETag"] = again["ETag"]
    s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id,
                                 MultipartUpload={"Parts": done})
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read()[-8:] == b"new last"


@pytest.mark.boto3
def test_completion_rules(s3, bucket):
    small = [os.urandom(MiB), os.urandom(MiB)]
    upload_id, done = upload_parts(s3, bucket, "k", small)
    with raises_s3("EntityTooSmall", 400):
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id,
                                     MultipartUpload={"Parts": done})
    with raises_s3("InvalidPartOrder", 400):
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id,
                                     MultipartUpload={"Parts": done[::-1]})
    with raises_s3("InvalidPart", 400):
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id,
                                     MultipartUpload={"Parts": [{"PartNumber": 1,
                                                                 "ETag": '"' + "0" * 32 + '"'}]})
    with raises_s3("InvalidPart", 400):
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id,
                                     MultipartUpload={"Parts": [{"PartNumber": 9,
                                                                 "ETag": done[0]["ETag"]}]})
    with raises_s3("MalformedXML", 400):
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id,
                                     MultipartUpload={"Parts": []})
    for bad in (0, 10001):
        with raises_s3("InvalidArgument", 400):
            s3.upload_part(Bucket=bucket, Key="k", UploadId=upload_id, PartNumber=bad, Body=b"x")
    # A single small part is a valid upload: only parts before the last have a minimum.
    resp = s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id,
                                        MultipartUpload={"Parts": done[:1]})
    assert resp["ETag"] == f'"{multipart_etag(small[:1])}"'
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == small[0]
    with raises_s3("NoSuchUpload", 404):  # completed uploads are gone
        s3.upload_part(Bucket=bucket, Key="k", UploadId=upload_id, PartNumber=1, Body=b"x")


@pytest.mark.boto3
def test_abort_discards(s3, bucket):
    upload_id, done = upload_parts(s3, bucket, "k", [b"abc"])
    s3.abort_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id)
    assert not s3.list_multipart_uploads(Bucket=bucket).get("Uploads")
    with raises_s3("NoSuchUpload", 404):
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id,
                                     MultipartUpload={"Parts": done})
    with raises_s3("NoSuchUpload", 404):
        s3.abort_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id)
    with raises_s3("NoSuchUpload", 404):
        s3.list_parts(Bucket=bucket, Key="k", UploadId="not-an-upload")
    with raises_s3("NoSuchUpload", 404):  # an upload id belongs to its key
        s3.create_multipart_upload(Bucket=bucket, Key="other")
        s3.list_parts(Bucket=bucket, Key="other", UploadId=upload_id)
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket=bucket, Key="k")


@pytest.mark.boto3
def test_bucket_delete_discards_uploads(s3):
    from conftest import unique_bucket
    name = unique_bucket()
    s3.create_bucket(Bucket=name)
    s3.create_multipart_upload(Bucket=name, Key="pending")
    s3.delete_bucket(Bucket=name)
    s3.create_bucket(Bucket=name)
    assert not s3.list_multipart_uploads(Bucket=name).get("Uploads")
    s3.delete_bucket(Bucket=name)


@pytest.mark.boto3
def test_list_parts_paging(s3, bucket):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    for n in (1, 2, 5, 7):
        s3.upload_part(Bucket=bucket, Key="k", UploadId=upload_id, PartNumber=n, Body=b"p%d" % n)
    first = s3.list_parts(Bucket=bucket, Key="k", UploadId=upload_id, MaxParts=2)
    assert [p["PartNumber"] for p in first["Parts"]] == [1, 2]
    assert first["IsTruncated"] and first["NextPartNumberMarker"] == 2
    rest = s3.list_parts(Bucket=bucket, Key="k", UploadId=upload_id, PartNumberMarker=2)
    assert [p["PartNumber"] for p in rest["Parts"]] == [5, 7] and not rest["IsTruncated"]
    s3.abort_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id)


@pytest.mark.boto3
def test_list_multipart_uploads(s3, bucket):
    ids = {}
    for key in ("a/1", "a/2", "b", "c/x/y", "c/z"):
        ids[key] = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    second_b = s3.create_multipart_upload(Bucket=bucket, Key="b")["UploadId"]
    every = s3.list_multipart_uploads(Bucket=bucket)["Uploads"]
    assert [(u["Key"], u["UploadId"]) for u in every] == [
        ("a/1", ids["a/1"]), ("a/2", ids["a/2"]), ("b", ids["b"]), ("b", second_b),
        ("c/x/y", ids["c/x/y"]), ("c/z", ids["c/z"])], "by key, then oldest first"
    page = s3.list_multipart_uploads(Bucket=bucket, MaxUploads=3)
    assert page["IsTruncated"] and len(page["Uploads"]) == 3
    assert (page["NextKeyMarker"], page["NextUploadIdMarker"]) == ("b", ids["b"])
    rest = s3.list_multipart_uploads(Bucket=bucket, KeyMarker=page["NextKeyMarker"],
                                     UploadIdMarker=page["NextUploadIdMarker"])
    assert [u["Key"] for u in rest["Uploads"]] == ["b", "c/x/y", "c/z"]
    assert [u["UploadId"] for u in rest["Uploads"]][0] == second_b
    after_key = s3.list_multipart_uploads(Bucket=bucket, KeyMarker="b")
    assert [u["Key"] for u in after_key["Uploads"]] == ["c/x/y", "c/z"]
    rolled = s3.list_multipart_uploads(Bucket=bucket, Delimiter="/")
    assert [u["Key"] for u in rolled["Uploads"]] == ["b", "b"]
    assert [p["Prefix"] for p in rolled["CommonPrefixes"]] == ["a/", "c/"]
    nested = s3.list_multipart_uploads(Bucket=bucket, Prefix="c/", Delimiter="/")
    assert [u["Key"] for u in nested["Uploads"]] == ["c/z"]
    assert [p["Prefix"] for p in nested["CommonPrefixes"]] == ["c/x/"]


@pytest.mark.boto3
def test_upload_part_copy(s3, bucket):
    source = os.urandom(6 * MiB)
    s3.put_object(Bucket=bucket, Key="src", Body=source)
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="dst")["UploadId"]
    whole = s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=upload_id, PartNumber=1,
                                CopySource={"Bucket": bucket, "Key": "src"})
    ranged = s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=upload_id, PartNumber=2,
                                 CopySource={"Bucket": bucket, "Key": "src"},
                                 CopySourceRange="bytes=100-1123")
    assert whole["CopyPartResult"]["ETag"] == f'"{md5_hex(source)}"'
    assert ranged["CopyPartResult"]["ETag"] == f'"{md5_hex(source[100:1124])}"'
    with raises_s3("InvalidArgument", 400):
        s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=upload_id, PartNumber=3,
                            CopySource={"Bucket": bucket, "Key": "src"},
                            CopySourceRange=f"bytes=0-{6 * MiB}")
    with raises_s3("NoSuchKey", 404):
        s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=upload_id, PartNumber=3,
                            CopySource={"Bucket": bucket, "Key": "missing"})
    s3.complete_multipart_upload(Bucket=bucket, Key="dst", UploadId=upload_id, MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": whole["CopyPartResult"]["ETag"]},
                  {"PartNumber": 2, "ETag": ranged["CopyPartResult"]["ETag"]}]})
    # The source stays intact when the part that shares its bytes is gone, and vice versa.
    s3.delete_object(Bucket=bucket, Key="src")
    assert s3.get_object(Bucket=bucket, Key="dst")["Body"].read() == source + source[100:1124]


@pytest.mark.boto3
@pytest.mark.needs_new_boto3
def test_composite_crc32(s3, bucket):
    parts = [os.urandom(5 * MiB), os.urandom(300)]
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="k",
                                           ChecksumAlgorithm="CRC32")["UploadId"]
    done = []
    for number, body in enumerate(parts, start=1):
        resp = s3.upload_part(Bucket=bucket, Key="k", UploadId=upload_id, PartNumber=number,
                              Body=body, ChecksumAlgorithm="CRC32")
        assert resp["ChecksumCRC32"] == crc32_b64(body)
        done.append({"PartNumber": number, "ETag": resp["ETag"],
                     "ChecksumCRC32": resp["ChecksumCRC32"]})
    listed = s3.list_parts(Bucket=bucket, Key="k", UploadId=upload_id)
    assert listed["ChecksumAlgorithm"] == "CRC32"
    assert [p["ChecksumCRC32"] for p in listed["Parts"]] == [crc32_b64(p) for p in parts]
    bad = [dict(done[0]), done[1]]
    bad[0]["ChecksumCRC32"] = crc32_b64(b"other")
    with raises_s3("InvalidPart", 400):
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id,
                                     MultipartUpload={"Parts": bad})
    resp = s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id,
                                        MultipartUpload={"Parts": done})
    raw = b"".join(base64.b64decode(crc32_b64(p)) for p in parts)
    composite = crc32_b64(raw) + "-2"
    assert resp["ChecksumCRC32"] == composite
    assert resp["ChecksumType"] == "COMPOSITE"
    head = s3.head_object(Bucket=bucket, Key="k", ChecksumMode="ENABLED")
    assert head["ChecksumCRC32"] == composite and head["ChecksumType"] == "COMPOSITE"


@pytest.mark.boto3
@pytest.mark.needs_new_boto3
def test_full_object_crc32_combined_from_parts(s3, bucket):
    parts = [os.urandom(5 * MiB), os.urandom(5 * MiB), os.urandom(12345)]
    whole = b"".join(parts)
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="k", ChecksumAlgorithm="CRC32",
                                           ChecksumType="FULL_OBJECT")["UploadId"]
    done = []
    for number, body in enumerate(parts, start=1):
        resp = s3.upload_part(Bucket=bucket, Key="k", UploadId=upload_id, PartNumber=number,
                              Body=body, ChecksumAlgorithm="CRC32")
        done.append({"PartNumber": number, "ETag": resp["ETag"]})
    with raises_s3("BadDigest", 400):
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id,
                                     MultipartUpload={"Parts": done},
                                     ChecksumCRC32=crc32_b64(whole[1:]), ChecksumType="FULL_OBJECT")
    resp = s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id,
                                        MultipartUpload={"Parts": done},
                                        ChecksumCRC32=crc32_b64(whole), ChecksumType="FULL_OBJECT")
    assert resp["ChecksumCRC32"] == crc32_b64(whole)
    assert resp["ChecksumType"] == "FULL_OBJECT"
    got = s3.get_object(Bucket=bucket, Key="k", ChecksumMode="ENABLED")
    assert got["ChecksumCRC32"] == crc32_b64(whole)
    assert got["Body"].read() == whole  # botocore verifies the CRC32 while reading


@pytest.mark.boto3
@pytest.mark.needs_new_boto3
def test_checksum_type_rules(s3, bucket):
    with raises_s3("InvalidRequest", 400):
        s3.create_multipart_upload(Bucket=bucket, Key="k", ChecksumAlgorithm="SHA256",
                                   ChecksumType="FULL_OBJECT")
    with raises_s3("InvalidRequest", 400):
        s3.create_multipart_upload(Bucket=bucket, Key="k", ChecksumAlgorithm="CRC64NVME",
                                   ChecksumType="COMPOSITE")
