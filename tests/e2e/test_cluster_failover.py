"""Replicas and failures (storage/replication.h), with a real etcd and three real gateways
on loopback, replicas = 2 in three zones:

  - A write is acknowledged only once both owners hold it: right after the answer, the
    key's replica (the owner that is not its primary) reports the bytes received.
  - kill -9 of one gateway during a write storm through the other two: every acknowledged
    object reads back byte-exact through the survivors, and writes go on once its lease
    expired (the survivors take its keys over from the copies they hold).
  - The survivors copy the keys the dead member held again, in the background; after
    that a second member dies and the last one still reads every acknowledged object.
"""
import os
import threading

import botocore.exceptions
import pytest
import requests

import s3sign

from conftest import make_client
from test_cluster import members, run_trio, status
from upstream import wait_until

REPLICAS = 2


@pytest.fixture
def trio(tmp_path_factory):
    yield from run_trio(tmp_path_factory, replicas=REPLICAS)


def patient_client(gw):
    # A client that retries as an application would while a member's lease runs out.
    return make_client(gw, retries={"max_attempts": 8, "mode": "standard"}, connect_timeout=5,
                       read_timeout=60)


def replication(gw):
    return status(gw, probe=False)["replication"]


def metric(gw, name, labels=""):
    for line in requests.get(gw.endpoint + "/metrics", timeout=10).text.splitlines():
        if line.startswith(name + labels + " ") or line.startswith(name + labels + "{"):
            return float(line.split()[-1])
    raise AssertionError(f"no {name}{labels} on /metrics")


def owners(gw, key, bucket="shared"):
    signer = s3sign.SigV4(gw.access_key, gw.secret_key, gw.region)
    path, query = "/_strata/admin/cluster/owners", [("bucket", bucket), ("key", key)]
    headers = {"host": gw.netloc, "x-amz-date": s3sign.amz_now(),
               "x-amz-content-sha256": s3sign.EMPTY_SHA256}
    headers["authorization"] = signer.authorization("GET", path, query, headers,
                                                    s3sign.EMPTY_SHA256)
    r = requests.get(gw.endpoint + path, params=query, headers=headers, timeout=10)
    assert r.status_code == 200, r.text
    return [o["node"] for o in r.json()["owners"]]


def test_a_write_is_on_both_owners_when_it_is_acknowledged(trio):
    by_name = {f"gw-{n}": gw for n, gw in zip("abc", trio)}
    for i in range(6):
        key = f"acked/{i}"
        primary, replica = owners(trio[0], key)
        assert owners(trio[1], key) == [primary, replica]  # every gateway places alike
        before = {name: replication(gw)["bytes_received"] for name, gw in by_name.items()}
        body = os.urandom(3 * 1024 * 1024 + 11 * i)
        # Through the one member that owns nothing of the key, when there is one.
        entry = next(gw for name, gw in by_name.items() if name not in (primary, replica))
        make_client(entry).put_object(Bucket="shared", Key=key, Body=body)
        after = {name: replication(gw)["bytes_received"] for name, gw in by_name.items()}
        # The replica had the bytes before the answer; nobody else received them.
        received = {name: after[name] - before[name] for name in by_name}
        assert received == {n: (len(body) if n == replica else 0) for n in by_name}, received
    assert metric(trio[0], "strata_replication_syncs_total", '{outcome="ok"}') + \
        metric(trio[1], "strata_replication_syncs_total", '{outcome="ok"}') + \
        metric(trio[2], "strata_replication_syncs_total", '{outcome="ok"}') >= 6


class Storm:
    """Writers through `gws`, each its own keys; records what was acknowledged."""

    def __init__(self, gws, prefix):
        self.acked = {}
        self.failed = 0
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.run, args=(gw, f"{prefix}/{i}"), daemon=True)
                        for i, gw in enumerate(gws)]

    def run(self, gw, prefix):
        s3 = make_client(gw, connect_timeout=5, read_timeout=30)
        n = 0
        while not self.stop.is_set():
            key = f"{prefix}/{n:05d}"
            body = os.urandom(1 + (n * 7919) % (256 * 1024))
            n += 1
            try:
                s3.put_object(Bucket="shared", Key=key, Body=body)
            except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError):
                with self.lock:
                    self.failed += 1
                continue
            with self.lock:
                self.acked[key] = body

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=120)
        assert not any(t.is_alive() for t in self.threads)

    def count(self):
        with self.lock:
            return len(self.acked)


def read_all(gw, acked):
    s3 = patient_client(gw)
    for key, body in acked.items():
        got = s3.get_object(Bucket="shared", Key=key)["Body"].read()
        assert got == body, key


def test_kill_during_a_write_storm_then_a_second_death_loses_nothing(trio):
    a, b, c = trio
    with Storm([a, b], "storm") as storm:
        wait_until(lambda: storm.count() >= 60, timeout=60, what="writes before the kill", srv=a)
        c.kill()
        at_kill = storm.count()
        # The survivors drop the dead member when its lease expires, and writes go on.
        for gw in (a, b):
            wait_until(lambda: members(gw) == ["gw-a", "gw-b"], what="c to leave", srv=gw)
        wait_until(lambda: storm.count() >= at_kill + 60, timeout=60,
                   what="writes after the kill", srv=a)
    acked = dict(storm.acked)
    assert len(acked) >= at_kill + 60
    for gw in (a, b):
        read_all(gw, acked)

    # Every key the dead member held is copied again to its new owner in the background.
    for gw in (a, b):
        wait_until(lambda: replication(gw)["repair_scans"] >= 1 and
                   not replication(gw)["repairing"] and
                   replication(gw)["under_replicated"] == 0,
                   what="the repair scan after c's death", srv=gw)
    repaired = sum(replication(gw)["keys_repaired"] for gw in (a, b))
    assert repaired > 0

    # A second death: the last member holds everything that was acknowledged.
    b.kill()
    wait_until(lambda: members(a) == ["gw-a"], what="b to leave", srv=a)
    read_all(a, acked)
    # And it takes writes alone.
    s3 = patient_client(a)
    s3.put_object(Bucket="shared", Key="after/both", Body=b"still here")
    assert s3.get_object(Bucket="shared", Key="after/both")["Body"].read() == b"still here"


def ready_members(gw):
    return sorted(m["node"] for m in status(gw, probe=False)["members"] if m["ready"])


def test_a_member_back_with_its_old_data_serves_nothing_stale(trio):
    a, b, c = trio
    s3 = patient_client(a)
    keys = [f"back/{i:02d}" for i in range(30)]
    for key in keys:
        s3.put_object(Bucket="shared", Key=key, Body=b"old " + key.encode())
    c.kill()
    wait_until(lambda: members(a) == ["gw-a", "gw-b"], what="c to leave", srv=a)
    # While c is away: overwrites, deletes and new keys.
    for i, key in enumerate(keys):
        if i % 3 == 0:
            s3.put_object(Bucket="shared", Key=key, Body=b"new " + key.encode())
        elif i % 3 == 1:
            s3.delete_object(Bucket="shared", Key=key)
    s3.put_object(Bucket="shared", Key="back/fresh", Body=b"fresh")
    c.start()
    for gw in trio:
        wait_until(lambda: ready_members(gw) == ["gw-a", "gw-b", "gw-c"],
                   what="c back and ready", srv=gw)
    assert replication(c)["catching_up"] is False
    assert replication(c)["keys_pulled"] > 0  # it asked about the keys it held
    for gw in trio:
        client = patient_client(gw)
        for i, key in enumerate(keys):
            if i % 3 == 1:
                with pytest.raises(botocore.exceptions.ClientError) as err:
                    client.get_object(Bucket="shared", Key=key)
                assert err.value.response["Error"]["Code"] == "NoSuchKey", key
            else:
                want = (b"new " if i % 3 == 0 else b"old ") + key.encode()
                assert client.get_object(Bucket="shared", Key=key)["Body"].read() == want, key
        assert client.get_object(Bucket="shared", Key="back/fresh")["Body"].read() == b"fresh"
        listed = [o["Key"] for o in client.list_objects_v2(Bucket="shared", Prefix="back/")
                  .get("Contents", [])]
        assert listed == sorted([k for i, k in enumerate(keys) if i % 3 != 1] + ["back/fresh"])
