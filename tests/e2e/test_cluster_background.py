"""Write-back, lifecycle and usage in a cluster (storage/key_steward.h,
gateway/usage_merge.h), with a real etcd, three real gateways on loopback (replicas = 2 in
three zones) and a real upstream (moto_server):

  - Every owner of a key holds its write-back item (the key sync carries it), only the
    key's primary pushes it, and the push reaches the other owners, which drop theirs.
    A member killed (SIGKILL) before it pushed its keys: their new primaries push them,
    byte-exact, and no item is left anywhere.
  - A lifecycle expiration is applied by the key's primary and synced to the other
    owners: after the rules expired a prefix, no gateway holds a copy of it, and a
    member's death resurrects nothing.
  - `strata-admin usage` through any member reports the whole cluster: every copy on the
    members' own tiers, the upstream's one copy once, and who answered.
"""
import json
import threading

import botocore.exceptions
import pytest

from conftest import admin, make_client
from test_cluster import members, run_trio, status
from test_cluster_failover import owners, patient_client
from test_writeback import backlog, flush
from upstream import cold_config, wait_until

REPLICAS = 2


def usage(gw):
    """`strata-admin usage --json` through `gw`: the whole cluster's."""
    return json.loads(admin(gw, "usage", "--json"))


def copies_held(gw, bucket):
    """Copies of `bucket`'s objects the cluster's members hold, over their local tiers."""
    return sum(line["objects"] for line in usage(gw)["buckets"]
               if line["bucket"] == bucket and line["tier"] != "cold")


@pytest.fixture
def bound_trio(tmp_path_factory, upstream):
    # A delay no test waits out: only a flush pushes, so nothing goes up behind its back.
    yield from run_trio(tmp_path_factory, replicas=REPLICAS,
                        extra=cold_config(upstream, delay="1h"))


@pytest.fixture
def lifecycle_trio(tmp_path_factory):
    yield from run_trio(tmp_path_factory, replicas=REPLICAS,
                        extra={"lifecycle": {"day": "1s", "interval": "1s"}})


def test_a_new_primary_pushes_what_a_dead_one_had_not(bound_trio, upstream):
    gws = bound_trio
    a, b, c = gws
    s3 = make_client(a)
    s3.create_bucket(Bucket="wback")
    assert upstream.client.head_bucket(Bucket="wback")  # bound to the upstream
    bodies = {f"k/{i:02d}": bytes([i]) * (1000 + 997 * i) for i in range(24)}
    for i, (key, body) in enumerate(bodies.items()):
        make_client(gws[i % 3]).put_object(Bucket="wback", Key=key, Body=body)
    assert upstream.keys("wback") == []

    # Each owner holds the key's item: two per key over the cluster.
    wait_until(lambda: sum(backlog(gw)["objects"] for gw in gws) == 2 * len(bodies),
               what=lambda: f"two items per key; now {[backlog(gw) for gw in gws]}", srv=a)
    primary_c = [k for k in bodies if owners(a, k, bucket="wback")[0] == "gw-c"]
    assert primary_c, "gw-c is the primary of no key: pick more keys"

    c.kill()
    for gw in (a, b):
        wait_until(lambda: members(gw) == ["gw-a", "gw-b"], what="c to leave", srv=gw)
    # The survivors push every key now theirs; a flush waits until its gateway's
    # backlog is empty, which takes the other's pushes too (their syncs clear the
    # mirrored items).
    answers = {}

    def flush_on(gw):
        answers[gw.workdir.name] = flush(gw, 90)

    flushes = [threading.Thread(target=flush_on, args=(gw,)) for gw in (a, b)]
    for t in flushes:
        t.start()
    for t in flushes:
        t.join(timeout=150)
    for name, (code, doc) in answers.items():
        assert code == 200 and doc["objects"] == 0, (name, doc)
    assert len(answers) == 2

    assert sorted(upstream.keys("wback")) == sorted(bodies)
    for key, body in bodies.items():
        assert upstream.body("wback", key) == body, key
    pushes = sum(backlog(gw)["pushes"] for gw in (a, b))
    assert pushes >= len(bodies), pushes

    # Once the repair gave every key its two copies again, the cluster's usage counts each
    # copy on the members' tiers and the upstream's once.
    for gw in (a, b):
        wait_until(lambda: status(gw, probe=False)["replication"]["under_replicated"] == 0 and
                   not status(gw, probe=False)["replication"]["repairing"],
                   what="the repair after c's death", srv=gw)
    wait_until(lambda: copies_held(b, "wback") == 2 * len(bodies),
               what=lambda: f"two copies of each key; now {copies_held(b, 'wback')}", srv=b)
    report = usage(a)
    cold = [line for line in report["buckets"] if (line["bucket"], line["tier"]) == ("wback", "cold")]
    assert len(cold) == 1 and cold[0]["objects"] == len(bodies), report
    assert cold[0]["bytes"] == sum(len(body) for body in bodies.values()), report
    assert report["cluster"]["complete"] is True and report["cluster"]["copies"] == 2, report
    assert sorted(m["node"] for m in report["cluster"]["members"]) == ["gw-a", "gw-b"]
    assert sum(m["objects"] for m in report["cluster"]["members"]
               if m["answered"]) >= 2 * len(bodies), report
    table = admin(b, "usage")
    assert "MEMBER" in table and "gw-a" in table and "INCOMPLETE" not in table, table


def test_an_expiration_reaches_every_owner_and_a_death_resurrects_nothing(lifecycle_trio):
    gws = lifecycle_trio
    a, b, c = gws
    s3 = patient_client(a)
    s3.put_bucket_lifecycle_configuration(
        Bucket="shared",
        LifecycleConfiguration={"Rules": [{"ID": "tmp", "Status": "Enabled",
                                           "Filter": {"Prefix": "tmp/"},
                                           "Expiration": {"Days": 2}}]})
    doomed = [f"tmp/{i:02d}" for i in range(18)]
    kept = [f"keep/{i:02d}" for i in range(6)]
    for i, key in enumerate(doomed + kept):
        make_client(gws[i % 3]).put_object(Bucket="shared", Key=key, Body=key.encode())

    def gone_everywhere():
        return copies_held(a, "shared") == REPLICAS * len(kept)

    # The primaries expire the prefix and their syncs remove every other copy.
    wait_until(gone_everywhere, timeout=60,
               what=lambda: "only the kept keys' copies; now "
               f"{copies_held(a, 'shared')} copies", srv=a)
    for gw in gws:
        client = make_client(gw)
        for key in doomed[:4]:
            with pytest.raises(botocore.exceptions.ClientError) as err:
                client.head_object(Bucket="shared", Key=key)
            assert err.value.response["Error"]["Code"] in ("404", "NoSuchKey"), key

    # Whoever dies, the survivors hold nothing expired to serve.
    c.kill()
    for gw in (a, b):
        wait_until(lambda: members(gw) == ["gw-a", "gw-b"], what="c to leave", srv=gw)
    for gw in (a, b):
        client = patient_client(gw)
        for key in doomed:
            with pytest.raises(botocore.exceptions.ClientError) as err:
                client.get_object(Bucket="shared", Key=key)
            assert err.value.response["Error"]["Code"] == "NoSuchKey", key
        for key in kept:
            assert client.get_object(Bucket="shared", Key=key)["Body"].read() == key.encode()
