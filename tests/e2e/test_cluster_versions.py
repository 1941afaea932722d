"""A key with a long history in a cluster (storage/cluster/key_sync_wire.h), with a real etcd
and three real gateways on loopback (replicas = 2 in three zones): a key sync carries the
key's whole stack of versions, in the call's payload up to 1,000 versions and at the head
of its stream beyond, so a key with more versions than that is still written, replicated,
repaired after its primary's death and read back version by version.
"""
import concurrent.futures

import pytest

from conftest import make_client
from test_cluster import members, run_trio
from test_cluster_failover import owners, patient_client, replication
from test_cluster_multipart import key_with_primary
from upstream import wait_until

REPLICAS = 2
VERSIONS = 1050  # past the 1,000 a sync's payload carries


@pytest.fixture
def trio(tmp_path_factory):
    yield from run_trio(tmp_path_factory, replicas=REPLICAS)


def test_a_key_with_more_than_a_thousand_versions_is_replicated(trio):
    a, b, c = trio
    by_name = {"gw-a": a, "gw-b": b, "gw-c": c}
    key = key_with_primary(a, "gw-c", "status")
    s3 = make_client(c)  # its primary: no hop per write
    s3.put_bucket_versioning(Bucket="shared", VersioningConfiguration={"Status": "Enabled"})

    def put(i):
        body = f"step {i}".encode()
        return i, s3.put_object(Bucket="shared", Key=key, Body=body)["VersionId"]

    # Two writers: each write syncs the whole stack, one after the other on the primary.
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        ids = dict(pool.map(put, range(VERSIONS)))
    # A version deleted by id, past the thousandth: the replica loses it too.
    s3.delete_object(Bucket="shared", Key=key, VersionId=ids[7])
    replica = by_name[owners(a, key)[1]]
    assert replication(replica)["replica_writes"] >= VERSIONS

    scans = {gw: replication(gw)["repair_scans"] for gw in (a, b)}
    c.kill()
    for gw in (a, b):
        wait_until(lambda: members(gw) == ["gw-a", "gw-b"], what="c to leave", srv=gw)
    survivor = patient_client(replica)
    listed = []
    for page in survivor.get_paginator("list_object_versions").paginate(Bucket="shared",
                                                                        Prefix=key):
        listed += [v["VersionId"] for v in page.get("Versions", [])]
    assert len(listed) == VERSIONS - 1
    assert ids[7] not in listed
    assert set(listed) == {ids[i] for i in ids if i != 7}
    # The current version is one of the last writes (two writers: any of the last few).
    step_of = {version: i for i, version in ids.items()}
    current = survivor.get_object(Bucket="shared", Key=key)
    newest = step_of[current["VersionId"]]
    assert newest >= VERSIONS - 3
    assert current["Body"].read() == f"step {newest}".encode()
    for i in (0, 500, 1001, newest):
        got = survivor.get_object(Bucket="shared", Key=key, VersionId=ids[i])
        assert got["Body"].read() == f"step {i}".encode()

    # The survivors repair the key's second copy (a stack sent in the stream), and it takes
    # writes on.
    for gw in (a, b):
        wait_until(lambda: replication(gw)["repair_scans"] > scans[gw] and
                   not replication(gw)["repairing"] and
                   replication(gw)["under_replicated"] == 0,
                   what="the repair scan after c's death", srv=gw)
    patient_client(a).put_object(Bucket="shared", Key=key, Body=b"after")
    for gw in (a, b):
        got = patient_client(gw).get_object(Bucket="shared", Key=key)
        assert got["Body"].read() == b"after"
        versions = patient_client(gw).list_object_versions(Bucket="shared", Prefix=key,
                                                            MaxKeys=5)
        assert versions["IsTruncated"]
