"""One namespace over three gateways (a real etcd, three real gateways on loopback): any
gateway answers any request; a request on a key is served by the key's primary owner,
to which the other gateways forward it over the peer port (gateway/forward.h).

  - Objects written through one gateway read back byte-exact, with the same heads,
    through the others; ranges, conditions, presigned URLs and aws-chunked uploads work
    through a gateway that does not own the key.
  - Overwrite and delete through one gateway, read through another at once: never stale.
  - A multipart upload's parts may arrive through different gateways.
  - CopyObject and UploadPartCopy work whichever members own the source and the
    destination (the destination's primary streams the source from the source's).
  - Errors are the owner's S3 errors; a bad signature is refused where it arrives.
  - Keys spread over the three owners (each serves forwarded calls).
"""
import hashlib
import os

import botocore.exceptions
import pytest
import requests

from conftest import make_client
from test_cluster import run_trio
from upstream import wait_until


@pytest.fixture(scope="module")
def trio(tmp_path_factory):
    yield from run_trio(tmp_path_factory)


def clients(gws):
    return [make_client(gw) for gw in gws]


def calls_served(gw):
    page = requests.get(gw.endpoint + "/metrics", timeout=10).text
    for line in page.splitlines():
        if line.startswith("strata_peer_calls_served_total"):
            return int(float(line.split()[-1]))
    raise AssertionError("no strata_peer_calls_served_total on /metrics")


def test_written_through_one_read_through_the_others(trio):
    a, b, c = clients(trio)
    before = [calls_served(gw) for gw in trio]
    sizes = [0, 1, 4096, 300 * 1024, 1024 * 1024 + 3, 5 * 1024 * 1024 + 17]
    bodies = {}
    for i in range(24):
        key = f"obj/{i:02d}"
        bodies[key] = os.urandom(sizes[i % len(sizes)])
        a.put_object(Bucket="shared", Key=key, Body=bodies[key], ContentType="application/x-test",
                     Metadata={"n": str(i)})
    for i, (key, body) in enumerate(bodies.items()):
        for s3 in (b, c):
            got = s3.get_object(Bucket="shared", Key=key)
            assert got["Body"].read() == body, key
            assert got["ContentType"] == "application/x-test"
            assert got["ETag"] == '"' + hashlib.md5(body).hexdigest() + '"'
        head = c.head_object(Bucket="shared", Key=key)
        assert head["ContentLength"] == len(body)
        assert head["Metadata"]["n"] == str(i)
    # Keys spread over the owners: each gateway served calls forwarded by the others.
    after = [calls_served(gw) for gw in trio]
    assert all(x - y >= 3 for x, y in zip(after, before)), (before, after)


def test_overwrite_and_delete_are_seen_at_once_through_another_gateway(trio):
    a, b, c = clients(trio)
    for i in range(15):
        key = f"flip/{i % 5}"
        body = f"version {i}".encode()
        a.put_object(Bucket="shared", Key=key, Body=body)
        assert b.get_object(Bucket="shared", Key=key)["Body"].read() == body
        c.delete_object(Bucket="shared", Key=key)
        with pytest.raises(botocore.exceptions.ClientError) as err:
            b.get_object(Bucket="shared", Key=key)
        assert err.value.response["Error"]["Code"] == "NoSuchKey"
        assert err.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404


def test_ranges_conditions_and_missing_keys_through_a_non_owner(trio):
    a, b, c = clients(trio)
    body = os.urandom(2 * 1024 * 1024 + 5)
    for i in range(6):
        a.put_object(Bucket="shared", Key=f"ranged/{i}", Body=body)
    for i in range(6):
        key = f"ranged/{i}"
        part = b.get_object(Bucket="shared", Key=key, Range="bytes=1048570-1048600")
        assert part["Body"].read() == body[1048570:1048601]
        assert part["ResponseMetadata"]["HTTPStatusCode"] == 206
        etag = c.head_object(Bucket="shared", Key=key)["ETag"]
        with pytest.raises(botocore.exceptions.ClientError) as err:
            c.get_object(Bucket="shared", Key=key, IfNoneMatch=etag)
        assert err.value.response["ResponseMetadata"]["HTTPStatusCode"] == 304
        with pytest.raises(botocore.exceptions.ClientError) as err:
            b.get_object(Bucket="shared", Key=key, IfMatch='"0000"')
        assert err.value.response["Error"]["Code"] == "PreconditionFailed"
    for s3 in (a, b, c):
        for i in range(4):
            with pytest.raises(botocore.exceptions.ClientError) as err:
                s3.get_object(Bucket="shared", Key=f"missing/{i}")
            assert err.value.response["Error"]["Code"] == "NoSuchKey"
            assert err.value.response["Error"]["Key"] == f"missing/{i}"
            with pytest.raises(botocore.exceptions.ClientError) as err:
                s3.head_object(Bucket="shared", Key=f"missing/{i}")
            assert err.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404


def test_presigned_and_aws_chunked_through_a_non_owner(trio):
    a, b, c = clients(trio)
    for i in range(6):
        key = f"signed/{i}"
        body = os.urandom(70_000 + i)
        url = b.generate_presigned_url("put_object", Params={"Bucket": "shared", "Key": key})
        assert requests.put(url, data=body, timeout=30).status_code == 200
        url = c.generate_presigned_url("get_object", Params={"Bucket": "shared", "Key": key})
        r = requests.get(url, timeout=30)
        assert r.status_code == 200 and r.content == body
        # A trailing checksum makes boto3 send aws-chunked; the owner verifies it.
        a.put_object(Bucket="shared", Key=key, Body=body[::-1], ChecksumAlgorithm="CRC32")
        got = c.get_object(Bucket="shared", Key=key, ChecksumMode="ENABLED")
        assert got["Body"].read() == body[::-1]
        assert got["ChecksumCRC32"]


def test_a_bad_signature_is_refused_where_it_arrives(trio):
    bad = make_client(trio[1], secret_key="not-the-secret")
    for i in range(4):
        with pytest.raises(botocore.exceptions.ClientError) as err:
            bad.put_object(Bucket="shared", Key=f"forged/{i}", Body=b"x")
        assert err.value.response["Error"]["Code"] == "SignatureDoesNotMatch"
    s3 = make_client(trio[0])
    for i in range(4):
        with pytest.raises(botocore.exceptions.ClientError) as err:
            s3.head_object(Bucket="shared", Key=f"forged/{i}")
        assert err.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404


def test_multipart_parts_through_different_gateways(trio):
    a, b, c = clients(trio)
    for n in range(3):
        key = f"mp/{n}"
        up = a.create_multipart_upload(Bucket="shared", Key=key)["UploadId"]
        p1, p2 = os.urandom(5 * 1024 * 1024), os.urandom(1234)
        e1 = b.upload_part(Bucket="shared", Key=key, UploadId=up, PartNumber=1, Body=p1)["ETag"]
        e2 = c.upload_part(Bucket="shared", Key=key, UploadId=up, PartNumber=2, Body=p2)["ETag"]
        parts = b.list_parts(Bucket="shared", Key=key, UploadId=up)["Parts"]
        assert [p["PartNumber"] for p in parts] == [1, 2]
        a.complete_multipart_upload(
            Bucket="shared", Key=key, UploadId=up,
            MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e1},
                                       {"PartNumber": 2, "ETag": e2}]})
        assert c.get_object(Bucket="shared", Key=key)["Body"].read() == p1 + p2


def bucket_status(s3, bucket):
    try:
        return s3.head_bucket(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"]
    except botocore.exceptions.ClientError as err:
        return err.response["ResponseMetadata"]["HTTPStatusCode"]


def list_all_v2(s3, bucket, **kwargs):
    keys, prefixes, token = [], [], None
    while True:
        args = dict(Bucket=bucket, **kwargs)
        if token:
            args["ContinuationToken"] = token
        page = s3.list_objects_v2(**args)
        keys += [o["Key"] for o in page.get("Contents", [])]
        prefixes += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
        if not page["IsTruncated"]:
            return keys, prefixes
        token = page["NextContinuationToken"]


def test_listings_merge_every_members_keys(trio):
    a, b, c = clients(trio)
    a.create_bucket(Bucket="listed")
    expected = sorted([f"dir/{d}/{i:02d}" for d in "xyz" for i in range(12)] + ["top"])
    for i, key in enumerate(expected):
        (a, b, c)[i % 3].put_object(Bucket="listed", Key=key, Body=key.encode())
    for s3 in (a, b, c):
        keys, _ = list_all_v2(s3, "listed")
        assert keys == expected
        keys, _ = list_all_v2(s3, "listed", MaxKeys=7)
        assert keys == expected
        keys, prefixes = list_all_v2(s3, "listed", Delimiter="/")
        assert keys == ["top"] and prefixes == ["dir/"]
        keys, prefixes = list_all_v2(s3, "listed", Prefix="dir/", Delimiter="/", MaxKeys=2)
        assert keys == [] and prefixes == ["dir/x/", "dir/y/", "dir/z/"]
        page = s3.list_objects(Bucket="listed", Prefix="dir/y/", Marker="dir/y/05", MaxKeys=3)
        assert [o["Key"] for o in page["Contents"]] == ["dir/y/06", "dir/y/07", "dir/y/08"]
        assert page["IsTruncated"] is True
    # A delete through one gateway is gone from every gateway's next listing.
    c.delete_object(Bucket="listed", Key="dir/x/03")
    for s3 in (a, b, c):
        keys, _ = list_all_v2(s3, "listed", Prefix="dir/x/")
        assert "dir/x/03" not in keys and len(keys) == 11
    # The bucket is not empty while any member holds one of its keys.
    remaining = sorted(set(expected) - {"dir/x/03"})
    for key in remaining[:-1]:
        a.delete_object(Bucket="listed", Key=key)
    for s3 in (b, c):
        with pytest.raises(botocore.exceptions.ClientError) as err:
            s3.delete_bucket(Bucket="listed")
        assert err.value.response["Error"]["Code"] == "BucketNotEmpty"
    b.delete_object(Bucket="listed", Key=remaining[-1])
    c.delete_bucket(Bucket="listed")
    # The other gateways' copies of the catalog follow etcd's watch (milliseconds).
    for s3 in (a, b):
        wait_until(lambda: bucket_status(s3, "listed") == 404, what="the bucket gone")


def test_version_listings_merge_every_members_versions(trio):
    a, b, c = clients(trio)
    a.create_bucket(Bucket="versioned")
    b.put_bucket_versioning(Bucket="versioned", VersioningConfiguration={"Status": "Enabled"})
    for s3 in (a, b, c):  # the catalog's change reached each gateway
        wait_until(lambda: s3.get_bucket_versioning(Bucket="versioned").get("Status") == "Enabled",
                   what="versioning seen everywhere")
    written = {}
    for i in range(10):
        key = f"k{i}"
        written[key] = [(a, b, c)[(i + n) % 3].put_object(Bucket="versioned", Key=key,
                                                          Body=bytes([n]))["VersionId"]
                        for n in range(3)]
    c.delete_object(Bucket="versioned", Key="k4")
    for s3 in (a, b, c):
        versions, markers, kwargs = [], [], {}
        while True:
            page = s3.list_object_versions(Bucket="versioned", MaxKeys=4, **kwargs)
            versions += [(v["Key"], v["VersionId"], v["IsLatest"]) for v in page.get("Versions", [])]
            markers += [(m["Key"], m["IsLatest"]) for m in page.get("DeleteMarkers", [])]
            if not page["IsTruncated"]:
                break
            kwargs = {"KeyMarker": page["NextKeyMarker"],
                      "VersionIdMarker": page["NextVersionIdMarker"]}
        assert markers == [("k4", True)]
        assert [k for k, _, _ in versions] == sorted(k for k in written for _ in range(3))
        for key, ids in written.items():
            listed = [(v, latest) for k, v, latest in versions if k == key]
            assert [v for v, _ in listed] == list(reversed(ids)), key
            assert [latest for _, latest in listed] == [key != "k4", False, False], key


def test_delete_objects_reaches_every_owner(trio):
    a, b, c = clients(trio)
    keys = [f"batch/{i:03d}" for i in range(40)]
    for key in keys:
        a.put_object(Bucket="shared", Key=key, Body=b"x")
    answer = b.delete_objects(Bucket="shared", Delete={
        "Objects": [{"Key": k} for k in keys[:30]] + [{"Key": "batch/never-was"}]})
    assert sorted(d["Key"] for d in answer["Deleted"]) == sorted(keys[:30] + ["batch/never-was"])
    assert not answer.get("Errors")
    answer = c.delete_objects(Bucket="shared", Delete={
        "Objects": [{"Key": k} for k in keys[30:]], "Quiet": True})
    assert not answer.get("Deleted") and not answer.get("Errors")
    for s3 in (a, b, c):
        assert list_all_v2(s3, "shared", Prefix="batch/")[0] == []
    for key in keys[::7]:
        with pytest.raises(botocore.exceptions.ClientError):
            a.head_object(Bucket="shared", Key=key)


def owner_of(gw, key, bucket="shared"):
    from test_cluster_failover import owners
    return owners(gw, key, bucket)[0]


def test_copies_work_within_and_across_owners(trio):
    a, b, c = clients(trio)
    body = os.urandom(3 * 1024 * 1024 + 17)
    a.put_object(Bucket="shared", Key="copy/source", Body=body, Metadata={"origin": "a"},
                 ChecksumAlgorithm="SHA256")
    source_owner = owner_of(trio[0], "copy/source")
    across = 0
    for i in range(24):
        dest = f"copy/dest-{i}"
        answer = b.copy_object(Bucket="shared", Key=dest,
                               CopySource={"Bucket": "shared", "Key": "copy/source"})
        assert answer["CopyObjectResult"]["ETag"]
        got = c.get_object(Bucket="shared", Key=dest)
        assert got["Body"].read() == body, dest
        assert got["Metadata"] == {"origin": "a"}
        across += owner_of(trio[0], dest) != source_owner
    # Keys spread over three owners: copies across owners happen (all but certainly).
    assert across > 0
    # REPLACE metadata, across owners too; the copy keeps the source's checksum algorithm.
    b.copy_object(Bucket="shared", Key="copy/replaced", MetadataDirective="REPLACE",
                  Metadata={"new": "yes"}, ContentType="text/x-copied",
                  CopySource={"Bucket": "shared", "Key": "copy/source"})
    head = a.head_object(Bucket="shared", Key="copy/replaced", ChecksumMode="ENABLED")
    assert head["Metadata"] == {"new": "yes"} and head["ContentType"] == "text/x-copied"
    assert head["ChecksumSHA256"] == a.head_object(Bucket="shared", Key="copy/source",
                                                   ChecksumMode="ENABLED")["ChecksumSHA256"]
    # The source's conditions and a missing source answer as S3 does, through any gateway.
    with pytest.raises(botocore.exceptions.ClientError) as err:
        c.copy_object(Bucket="shared", Key="copy/never", CopySourceIfMatch='"0123"',
                      CopySource={"Bucket": "shared", "Key": "copy/source"})
    assert err.value.response["Error"]["Code"] == "PreconditionFailed"
    with pytest.raises(botocore.exceptions.ClientError) as err:
        c.copy_object(Bucket="shared", Key="copy/never",
                      CopySource={"Bucket": "shared", "Key": "copy/no-such-source"})
    assert err.value.response["Error"]["Code"] == "NoSuchKey"
    for s3 in (a, b, c):
        with pytest.raises(botocore.exceptions.ClientError) as err:
            s3.head_object(Bucket="shared", Key="copy/never")
        assert err.value.response["Error"]["Code"] in ("404", "NoSuchKey")


def test_upload_part_copy_across_owners(trio):
    a, b, c = clients(trio)
    mib = 1024 * 1024
    source = os.urandom(12 * mib + 5)
    a.put_object(Bucket="shared", Key="partcopy/source", Body=source)
    source_owner = owner_of(trio[0], "partcopy/source")
    dest = next(f"partcopy/dest-{i}" for i in range(100)
                if owner_of(trio[0], f"partcopy/dest-{i}") != source_owner)
    upload = b.create_multipart_upload(Bucket="shared", Key=dest)["UploadId"]
    ranges = [(0, 5 * mib - 1), (5 * mib, 10 * mib - 1), (10 * mib, len(source) - 1)]
    parts = []
    for n, (first, last) in enumerate(ranges, 1):
        answer = (a, b, c)[n % 3].upload_part_copy(
            Bucket="shared", Key=dest, UploadId=upload, PartNumber=n,
            CopySource={"Bucket": "shared", "Key": "partcopy/source"},
            CopySourceRange=f"bytes={first}-{last}")
        parts.append({"PartNumber": n, "ETag": answer["CopyPartResult"]["ETag"]})
    with pytest.raises(botocore.exceptions.ClientError) as err:
        c.upload_part_copy(Bucket="shared", Key=dest, UploadId=upload, PartNumber=9,
                           CopySource={"Bucket": "shared", "Key": "partcopy/source"},
                           CopySourceRange=f"bytes=0-{len(source)}")
    assert err.value.response["Error"]["Code"] == "InvalidArgument"
    c.complete_multipart_upload(Bucket="shared", Key=dest, UploadId=upload,
                                MultipartUpload={"Parts": parts})
    for s3 in (a, b, c):
        assert s3.get_object(Bucket="shared", Key=dest)["Body"].read() == source


def test_multipart_upload_listing_merges_every_members_uploads(trio):
    a, b, c = clients(trio)
    started = {}
    for i in range(12):
        key = f"uploads/{i:02d}"
        started[key] = (a, b, c)[i % 3].create_multipart_upload(Bucket="shared",
                                                                Key=key)["UploadId"]
    for s3 in (a, b, c):
        listed, kwargs = [], {}
        while True:
            page = s3.list_multipart_uploads(Bucket="shared", Prefix="uploads/", MaxUploads=5,
                                             **kwargs)
            listed += [(u["Key"], u["UploadId"]) for u in page.get("Uploads", [])]
            if not page["IsTruncated"]:
                break
            kwargs = {"KeyMarker": page["NextKeyMarker"],
                      "UploadIdMarker": page["NextUploadIdMarker"]}
        assert listed == sorted(started.items())
    for key, upload_id in started.items():
        c.abort_multipart_upload(Bucket="shared", Key=key, UploadId=upload_id)
    assert not a.list_multipart_uploads(Bucket="shared", Prefix="uploads/").get("Uploads")


def test_an_s3fs_mount_reads_the_checkpoints_written_through_another_gateways_mount(
        trio, tmp_path):
    from test_s3fs import S3FS, S3fsMount  # noqa: E402 - s3fs's own helpers
    import require
    require.require_tool("s3fs", path=S3FS, package="s3fs")
    require.require_tool("fusermount", package="fuse")
    # What torch.save does to a path: open, write the archive front to back, close.
    written = {}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    writer = S3fsMount(trio[0], "shared", tmp_path / "a").mount()
    try:
        (writer.root / "ckpt").mkdir()
        for n, size in enumerate([1000, 300_000, 5 * 1024 * 1024, 17 * 1024 * 1024 + 3]):
            data = os.urandom(size)
            with open(writer.root / "ckpt" / f"epoch-{n}.pt", "wb") as f:
                for at in range(0, size, 1 << 20):
                    f.write(data[at:at + (1 << 20)])
            written[f"epoch-{n}.pt"] = hashlib.sha256(data).hexdigest()
    finally:
        writer.unmount()
        print(writer.log())
    reader = S3fsMount(trio[1], "shared", tmp_path / "b").mount()
    try:
        assert sorted(os.listdir(reader.root / "ckpt")) == sorted(written)
        for name, digest in written.items():
            with open(reader.root / "ckpt" / name, "rb") as f:
                assert hashlib.sha256(f.read()).hexdigest() == digest, name
    finally:
        reader.unmount()
        print(reader.log())
