"""Multipart uploads in a cluster (storage/replication.h's SyncUpload), with a real etcd and
three real gateways on loopback (replicas = 2 in three zones):

  - An upload's creation and every part (UploadPart and UploadPartCopy) reach the key's
    other owner before they are acknowledged, so when the key's primary dies (SIGKILL)
    the survivors list the upload once, list its parts, take the next part and complete
    it byte-exact.
  - A completion's key sync makes the other owners' version from the parts they hold (no
    byte travels again), and a completed or aborted upload leaves no copy behind: after
    the primary's death the next primary neither lists it nor takes parts for it.
  - The repair after a death moves the uploads of the keys whose owners changed, so a
    second death loses nothing; a joining member receives the uploads of the keys it will
    be the primary of, and a drained member hands its keys' uploads over.
"""
import os

import botocore.exceptions
import pytest

from conftest import admin, make_client
from test_cluster import members, run_trio
from test_cluster_failover import owners, patient_client, replication
from test_cluster_growth import another_member
from test_cluster_growth import settled as growth_settled
from upstream import wait_until

REPLICAS = 2
MIB = 1024 * 1024


@pytest.fixture
def trio(tmp_path_factory):
    yield from run_trio(tmp_path_factory, replicas=REPLICAS)


def key_with_primary(gw, primary, prefix):
    """A key of "shared" whose primary owner is `primary`."""
    for i in range(200):
        key = f"{prefix}/{i}.pt"
        if owners(gw, key)[0] == primary:
            return key
    raise AssertionError(f"no key under {prefix}/ has primary {primary}")


def listed_uploads(gw):
    answer = make_client(gw).list_multipart_uploads(Bucket="shared")
    return sorted((u["Key"], u["UploadId"]) for u in answer.get("Uploads", []))


def test_an_upload_outlives_its_primary(trio):
    a, b, c = trio
    key = key_with_primary(a, "gw-c", "ckpt")
    replica = owners(a, key)[1]
    s3a, s3b = make_client(a), make_client(b)
    source = os.urandom(7 * MIB)
    s3a.put_object(Bucket="shared", Key="src/blob", Body=source)

    upload_id = s3a.create_multipart_upload(Bucket="shared", Key=key)["UploadId"]
    parts = {1: os.urandom(5 * MIB + 17), 2: os.urandom(5 * MIB)}
    before = replication(a)["bytes_received"] + replication(b)["bytes_received"]
    etags = {1: s3b.upload_part(Bucket="shared", Key=key, UploadId=upload_id, PartNumber=1,
                                Body=parts[1])["ETag"],
             2: s3a.upload_part(Bucket="shared", Key=key, UploadId=upload_id, PartNumber=2,
                                Body=parts[2])["ETag"]}
    copied = s3b.upload_part_copy(Bucket="shared", Key=key, UploadId=upload_id, PartNumber=3,
                                  CopySource={"Bucket": "shared", "Key": "src/blob"},
                                  CopySourceRange=f"bytes=1000-{1000 + 5 * MIB - 1}")
    etags[3] = copied["CopyPartResult"]["ETag"]
    parts[3] = source[1000:1000 + 5 * MIB]
    # The replica received every part's bytes before the part was acknowledged.
    after = replication(a)["bytes_received"] + replication(b)["bytes_received"]
    assert after - before >= sum(len(p) for p in parts.values()), (replica, before, after)
    # Listed once, by its primary, whichever gateway is asked.
    for gw in trio:
        assert listed_uploads(gw) == [(key, upload_id)]

    c.kill()
    for gw in (a, b):
        wait_until(lambda: members(gw) == ["gw-a", "gw-b"], what="c to leave", srv=gw)
    s3a, s3b = patient_client(a), patient_client(b)
    for gw in (a, b):
        assert listed_uploads(gw) == [(key, upload_id)]
    listed = s3b.list_parts(Bucket="shared", Key=key, UploadId=upload_id)["Parts"]
    assert [(p["PartNumber"], p["ETag"], p["Size"]) for p in listed] == \
        [(n, etags[n], len(parts[n])) for n in (1, 2, 3)]
    parts[4] = os.urandom(123457)
    etags[4] = s3b.upload_part(Bucket="shared", Key=key, UploadId=upload_id, PartNumber=4,
                               Body=parts[4])["ETag"]
    done = s3a.complete_multipart_upload(
        Bucket="shared", Key=key, UploadId=upload_id,
        MultipartUpload={"Parts": [{"PartNumber": n, "ETag": etags[n]} for n in (1, 2, 3, 4)]})
    whole = b"".join(parts[n] for n in (1, 2, 3, 4))
    for s3 in (s3a, s3b):
        got = s3.get_object(Bucket="shared", Key=key)
        assert got["ETag"] == done["ETag"]
        assert got["Body"].read() == whole
    for gw in (a, b):
        assert listed_uploads(gw) == []


def test_a_completed_or_aborted_upload_leaves_no_copy_behind(trio):
    a, b, c = trio
    s3a, s3b = make_client(a), make_client(b)
    completed = key_with_primary(a, "gw-c", "done")
    aborted = key_with_primary(a, "gw-c", "gone")
    body = os.urandom(MIB + 5)
    first = s3a.create_multipart_upload(Bucket="shared", Key=completed)["UploadId"]
    etag = s3b.upload_part(Bucket="shared", Key=completed, UploadId=first, PartNumber=1,
                           Body=body)["ETag"]
    replica = {"gw-a": a, "gw-b": b}[owners(a, completed)[1]]
    before = replication(replica)["bytes_received"]
    s3a.complete_multipart_upload(Bucket="shared", Key=completed, UploadId=first,
                                  MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
    # The replica made the version from the part it held: no byte of it travelled again.
    assert replication(replica)["bytes_received"] == before
    second = s3b.create_multipart_upload(Bucket="shared", Key=aborted)["UploadId"]
    s3a.upload_part(Bucket="shared", Key=aborted, UploadId=second, PartNumber=1, Body=b"x" * 99)
    s3b.abort_multipart_upload(Bucket="shared", Key=aborted, UploadId=second)
    for gw in trio:
        assert listed_uploads(gw) == []

    c.kill()
    for gw in (a, b):
        wait_until(lambda: members(gw) == ["gw-a", "gw-b"], what="c to leave", srv=gw)
    # The keys' next primaries held the uploads as replicas: nothing of them is left.
    for gw in (a, b):
        assert listed_uploads(gw) == []
    s3 = patient_client(a)
    for key, upload_id in ((completed, first), (aborted, second)):
        with pytest.raises(botocore.exceptions.ClientError) as refused:
            s3.upload_part(Bucket="shared", Key=key, UploadId=upload_id, PartNumber=2, Body=b"y")
        assert refused.value.response["Error"]["Code"] == "NoSuchUpload"
    assert patient_client(b).get_object(Bucket="shared", Key=completed)["Body"].read() == body


def start_upload(gw, key, count):
    """An upload of `key` through `gw` with `count` parts of 5 MiB (and a bit): its id and
    the parts {number: (etag, body)}."""
    s3 = make_client(gw)
    upload_id = s3.create_multipart_upload(Bucket="shared", Key=key)["UploadId"]
    parts = {}
    for n in range(1, count + 1):
        body = os.urandom(5 * MIB + n)
        parts[n] = (s3.upload_part(Bucket="shared", Key=key, UploadId=upload_id, PartNumber=n,
                                   Body=body)["ETag"], body)
    return upload_id, parts


def complete_and_read(gw, key, upload_id, parts):
    s3 = patient_client(gw)
    listed = s3.list_parts(Bucket="shared", Key=key, UploadId=upload_id)["Parts"]
    assert [(p["PartNumber"], p["ETag"]) for p in listed] == \
        [(n, etag) for n, (etag, _) in sorted(parts.items())]
    s3.complete_multipart_upload(
        Bucket="shared", Key=key, UploadId=upload_id,
        MultipartUpload={"Parts": [{"PartNumber": n, "ETag": etag}
                                   for n, (etag, _) in sorted(parts.items())]})
    whole = b"".join(body for _, (_, body) in sorted(parts.items()))
    assert s3.get_object(Bucket="shared", Key=key)["Body"].read() == whole


def settled(gw, scans_before):
    """A repair scan finished since `scans_before` and left nothing under-replicated."""
    r = replication(gw)
    return (r["repair_scans"] > scans_before and not r["repairing"] and
            r["under_replicated"] == 0)


def test_an_upload_survives_a_second_death_after_the_repair(trio):
    a, b, c = trio
    by_name = {"gw-a": a, "gw-b": b, "gw-c": c}
    key = key_with_primary(a, "gw-c", "twice")
    replica = owners(a, key)[1]
    upload_id, parts = start_upload(by_name[replica], key, 2)
    scans = {gw: replication(gw)["repair_scans"] for gw in (a, b)}

    c.kill()
    for gw in (a, b):
        wait_until(lambda: members(gw) == ["gw-a", "gw-b"], what="c to leave", srv=gw)
    # The key's new primary (the old replica) moves the upload to its new second owner.
    for gw in (a, b):
        wait_until(lambda: settled(gw, scans[gw]), what="the repair scan after c's death",
                   srv=gw)
    last_name = next(name for name in by_name if name not in ("gw-c", replica))
    last = by_name[last_name]
    by_name[replica].kill()
    wait_until(lambda: members(last) == [last_name], what="the second death", srv=last)
    assert listed_uploads(last) == [(key, upload_id)]
    complete_and_read(last, key, upload_id, parts)


def test_a_drained_member_hands_its_uploads_over(trio):
    a, b, c = trio
    key = key_with_primary(a, "gw-c", "drained")
    upload_id, parts = start_upload(a, key, 2)
    out = admin(a, "cluster", "drain", "gw-c", "--wait", "120")
    assert "gw-c: drained" in out, out
    c.stop()
    for gw in (a, b):
        wait_until(lambda: members(gw) == ["gw-a", "gw-b"], what="c to leave", srv=gw)
        assert listed_uploads(gw) == [(key, upload_id)]
    complete_and_read(b, key, upload_id, parts)


def test_a_joining_member_receives_the_uploads_of_its_keys(trio, tmp_path_factory):
    a, b, c = trio
    s3 = make_client(a)
    uploads = {}
    for i in range(24):
        key = f"join/{i:02d}.pt"
        upload_id = s3.create_multipart_upload(Bucket="shared", Key=key)["UploadId"]
        body = os.urandom(100_000 + i)
        etag = s3.upload_part(Bucket="shared", Key=key, UploadId=upload_id, PartNumber=1,
                              Body=body)["ETag"]
        uploads[key] = (upload_id, {1: (etag, body)})
    d = another_member(tmp_path_factory, a, "gw-d", "zone-4")
    try:
        d.start()
        wait_until(lambda: growth_settled([a, b, c, d]), timeout=90,
                   what="gw-d to join and the cluster to settle", srv=d)
        # Every upload is listed once, by its key's primary, gw-d's among them.
        expected = sorted((key, upload_id) for key, (upload_id, _) in uploads.items())
        for gw in (a, d):
            assert listed_uploads(gw) == expected
        joined = [key for key in uploads if owners(a, key)[0] == "gw-d"]
        assert joined, "gw-d is the primary of no upload's key: pick more keys"
        for key in joined:
            upload_id, parts = uploads[key]
            complete_and_read(a, key, upload_id, parts)
    finally:
        if d.running():
            d.stop()
