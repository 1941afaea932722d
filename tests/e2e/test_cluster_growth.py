"""Growth and shrinking (storage/ownership.h, storage/replication.h), with a real etcd and
real gateways on loopback, replicas = 2:

  - A fourth member joins during a write storm: it catches up while the old owners keep
    serving, becomes ready, the members that no longer own a key drop their copies; then
    one of the first three is killed with SIGKILL, and every acknowledged object reads back
    byte-exact through the three left.
  - `strata-admin cluster drain gw-c` (through another gateway) hands gw-c's keys to their
    next owners while writes go on; once it says drained, gw-c is stopped and then a second
    member killed: the last one reads every acknowledged object.
"""
import pytest

from conftest import StrataServer, admin, free_port
from test_cluster import members, run_trio, status
from test_cluster_failover import Storm, patient_client, read_all, ready_members, replication
from upstream import wait_until

REPLICAS = 2


@pytest.fixture
def trio(tmp_path_factory):
    yield from run_trio(tmp_path_factory, replicas=REPLICAS)


def another_member(tmp_path_factory, like, node, zone):
    """A gateway of `like`'s cluster (same etcd, secret, replicas) named `node`."""
    cluster = dict(like.config["cluster"])
    cluster.update(node=node, zone=zone, peer_listen=f"127.0.0.1:{free_port()}")
    return StrataServer(tmp_path_factory.mktemp(node), {"cluster": cluster})


def settled(gws):
    """Every gateway sees the same members, all ready, and none is moving keys."""
    views = [status(gw, probe=False) for gw in gws]
    names = sorted(gw_view["node"] for gw_view in views)
    for view in views:
        if sorted(m["node"] for m in view["members"]) != names:
            return False
        if not all(m["state"] == "ready" for m in view["members"]):
            return False
        r = view["replication"]
        if r["catching_up"] or r["draining"] or r["repairing"] or r["under_replicated"]:
            return False
    return len({view["epoch"] for view in views}) == 1


def test_a_member_joins_during_writes_then_another_dies_losing_nothing(trio, tmp_path_factory):
    a, b, c = trio
    d = another_member(tmp_path_factory, a, "gw-d", "zone-4")
    try:
        with Storm([a, b], "grow") as storm:
            wait_until(lambda: storm.count() >= 80, timeout=60, what="writes before the join",
                       srv=a)
            d.start()
            for gw in (a, b, c, d):
                wait_until(lambda: ready_members(gw) == ["gw-a", "gw-b", "gw-c", "gw-d"],
                           timeout=60, what="gw-d to catch up and be ready", srv=gw)
            at_ready = storm.count()
            wait_until(lambda: storm.count() >= at_ready + 40, timeout=60,
                       what="writes after the join", srv=a)
        acked = dict(storm.acked)
        # The joiner received its share of the keys, and the members that lost a key to it
        # dropped their copies once the change settled.
        wait_until(lambda: settled([a, b, c, d]) and
                   sum(replication(gw)["keys_dropped"] for gw in (a, b, c)) > 0,
                   timeout=60, what="the join to settle", srv=d)
        assert replication(d)["replica_writes"] > 0
        assert not replication(d)["catching_up"]
        for gw in (a, b, c, d):
            read_all(gw, acked)

        # Then one of the first three dies: the three left hold everything acknowledged.
        a.kill()
        for gw in (b, c, d):
            wait_until(lambda: members(gw) == ["gw-b", "gw-c", "gw-d"], what="a to leave",
                       srv=gw)
        for gw in (b, c, d):
            read_all(gw, acked)
        listed = []
        for page in patient_client(d).get_paginator("list_objects_v2").paginate(
                Bucket="shared", Prefix="grow/"):
            listed += [o["Key"] for o in page.get("Contents", [])]
        assert set(acked) <= set(listed)
    finally:
        if d.running():
            d.stop()


def test_drain_hands_every_key_over_before_the_member_leaves(trio):
    a, b, c = trio
    s3 = patient_client(a)
    acked = {}
    for i in range(60):
        key = f"drain/{i:03d}"
        body = (f"{key} " * (1 + i * 37)).encode()
        s3.put_object(Bucket="shared", Key=key, Body=body)
        acked[key] = body

    with Storm([a, b], "during-drain") as storm:
        out = admin(a, "cluster", "drain", "gw-c", "--wait", "120")
        assert "gw-c: drained" in out, out
    acked.update(storm.acked)
    view = status(a, probe=False)
    states = {m["node"]: m["state"] for m in view["members"]}
    assert states == {"gw-a": "ready", "gw-b": "ready", "gw-c": "drained"}, states
    assert replication(c)["keys_handed_off"] > 0
    assert not replication(c)["draining"]
    text = admin(a, "cluster", "status")
    assert "drained" in text, text

    # Drained: it owns nothing, so stopping it and then killing b loses nothing.
    c.stop()
    for gw in (a, b):
        wait_until(lambda: members(gw) == ["gw-a", "gw-b"], what="c to leave", srv=gw)
    b.kill()
    wait_until(lambda: members(a) == ["gw-a"], what="b to leave", srv=a)
    read_all(a, acked)


def test_drain_refusals(trio):
    a, b, c = trio
    res = admin_fails(a, "cluster", "drain", "gw-nobody")
    assert "gw-nobody" in res.stdout + res.stderr
    res = admin_fails(a, "cluster", "drain")
    assert res.returncode == 2  # usage


def admin_fails(srv, *args):
    from conftest import run_admin
    res = run_admin(srv.config_path, *args)
    assert res.returncode != 0, res.stdout
    return res
