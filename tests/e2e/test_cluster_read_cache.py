"""The read cache of a gateway that does not own a key (storage/read_cache.h), with a real
etcd and three real gateways on loopback: a GET through a non-owner keeps a copy of the
version it streamed; later GETs still ask the key's primary, which answers them (the
version current, conditions, range, headers) and lets the non-owner send the bytes of
its copy when the version is the one the copy holds.

  - The second read through a non-owner is served from its copy, byte-exact, ranges too.
  - Overwrites (the "null" version, same size), deletes, versions by id and conditions
    are answered as the primary sees them: never a stale byte from a copy.
  - A copy damaged on the disk is dropped: found before the first byte went out, the read
    goes to the owner; found later, that read is cut short, and the next one is whole.
  - STANDARD_IA versions and HEADs are never cached.
  - A gateway that holds a replica of the key sends the bytes of its own copy the same way
    and keeps no second one.
"""
import os
import pathlib

import botocore.exceptions
import pytest

from conftest import make_client, metric
from test_cluster import run_trio
from test_cluster_failover import owners
from upstream import wait_until


@pytest.fixture(scope="module")
def trio(tmp_path_factory):
    # replicas = 2 of 3: each key has a primary, a replica and a gateway that owns nothing.
    yield from run_trio(tmp_path_factory, replicas=2)


def roles(trio, key, bucket="shared"):
    """The key's primary, its replica and the gateway that does not own it."""
    by_name = {f"gw-{n}": gw for n, gw in zip("abc", trio)}
    names = owners(trio[0], key, bucket)
    assert len(names) == 2, names
    outsider = next(gw for n, gw in by_name.items() if n not in names)
    return by_name[names[0]], by_name[names[1]], outsider


def non_owner(trio, key, bucket="shared"):
    """The key's primary, and the other two gateways: the one that owns nothing first."""
    primary, replica, outsider = roles(trio, key, bucket)
    return primary, [outsider, replica]


def gets(gw, bytes_from):
    return metric(gw, "strata_forwarded_gets_total", bytes_from=bytes_from) or 0


def events(gw, event):
    return metric(gw, "strata_read_cache_events_total", event=event) or 0


def settles_at(count, expected, gw, what):
    """Waits for a counter to reach `expected`: a read is counted once its last byte went
    out, which may be just after the client read that byte."""
    wait_until(lambda: count() == expected, what=what, srv=gw)


def copies_on_disk(gw):
    hot = next(t for t in gw.config["tiers"] if t["name"] == "hot")
    return sorted(p for p in (pathlib.Path(hot["path"]) / "read-cache" / "data").rglob("*")
                  if p.is_file())


def test_a_second_read_through_a_non_owner_is_served_from_its_copy(trio):
    primary, others = non_owner(trio, "cached/big")
    reader = others[0]
    s3 = make_client(reader)
    body = os.urandom(3 * 1024 * 1024 + 5)
    make_client(primary).put_object(Bucket="shared", Key="cached/big", Body=body)
    fills, hits = events(reader, "fill"), events(reader, "hit")
    assert s3.get_object(Bucket="shared", Key="cached/big")["Body"].read() == body
    # The copy is kept once the owner's stream ended, which may be just after the client
    # read the last byte.
    wait_until(lambda: events(reader, "fill") == fills + 1, what="the copy kept", srv=reader)
    assert events(reader, "hit") == hits
    from_cache = gets(reader, "cache")
    got = s3.get_object(Bucket="shared", Key="cached/big")
    assert got["Body"].read() == body
    assert got["ContentLength"] == len(body)
    settles_at(lambda: events(reader, "hit"), hits + 1, reader, "a hit counted")
    # Ranges come from the copy too, with the owner's Content-Range.
    part = s3.get_object(Bucket="shared", Key="cached/big", Range="bytes=1000000-2500000")
    assert part["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert part["ContentRange"] == f"bytes 1000000-2500000/{len(body)}"
    assert part["Body"].read() == body[1000000:2500001]
    tail = s3.get_object(Bucket="shared", Key="cached/big", Range="bytes=-7")
    assert tail["Body"].read() == body[-7:]
    settles_at(lambda: events(reader, "hit"), hits + 3, reader, "three hits counted")
    # A HEAD is the owner's answer alone.
    assert s3.head_object(Bucket="shared", Key="cached/big")["ContentLength"] == len(body)
    assert events(reader, "hit") == hits + 3
    assert gets(reader, "cache") == from_cache + 3
    assert metric(reader, "strata_read_cache_entries") >= 1
    assert metric(reader, "strata_read_cache_bytes") >= len(body)


def test_a_replica_serves_the_bytes_of_its_own_copy(trio):
    primary, replica, outsider = roles(trio, "replicated/doc")
    s3 = make_client(replica)
    for i in range(3):
        body = os.urandom(700_000)
        make_client(outsider if i % 2 else primary).put_object(
            Bucket="shared", Key="replicated/doc", Body=body)
        from_replica, fills = gets(replica, "replica"), events(replica, "fill")
        got = s3.get_object(Bucket="shared", Key="replicated/doc")
        assert got["Body"].read() == body, i
        part = s3.get_object(Bucket="shared", Key="replicated/doc", Range="bytes=5-9")
        assert part["Body"].read() == body[5:10]
        settles_at(lambda: gets(replica, "replica"), from_replica + 2, replica,
                   "both reads counted")
        assert events(replica, "fill") == fills  # no second copy of what it holds
    make_client(outsider).delete_object(Bucket="shared", Key="replicated/doc")
    with pytest.raises(botocore.exceptions.ClientError) as err:
        s3.get_object(Bucket="shared", Key="replicated/doc")
    assert err.value.response["Error"]["Code"] == "NoSuchKey"


def test_overwrites_deletes_and_conditions_are_the_primarys(trio):
    primary, others = non_owner(trio, "cached/flip")
    reader, writer = make_client(others[0]), make_client(others[1])
    for i in range(6):
        # Same size, same "null" version id: only the owner knows which bytes are current.
        body = bytes([i]) * 100_000
        writer.put_object(Bucket="shared", Key="cached/flip", Body=body)
        for _ in range(2):
            got = reader.get_object(Bucket="shared", Key="cached/flip")
            assert got["Body"].read() == body, i
        etag = got["ETag"]
        with pytest.raises(botocore.exceptions.ClientError) as err:
            reader.get_object(Bucket="shared", Key="cached/flip", IfNoneMatch=etag)
        assert err.value.response["ResponseMetadata"]["HTTPStatusCode"] == 304
        with pytest.raises(botocore.exceptions.ClientError) as err:
            reader.get_object(Bucket="shared", Key="cached/flip", IfMatch='"0000"')
        assert err.value.response["Error"]["Code"] == "PreconditionFailed"
    make_client(primary).delete_object(Bucket="shared", Key="cached/flip")
    with pytest.raises(botocore.exceptions.ClientError) as err:
        reader.get_object(Bucket="shared", Key="cached/flip")
    assert err.value.response["Error"]["Code"] == "NoSuchKey"


def test_versions_by_id_through_a_non_owner_with_a_copy(trio):
    s3 = make_client(trio[0])
    s3.create_bucket(Bucket="cached-versions")
    s3.put_bucket_versioning(Bucket="cached-versions",
                             VersioningConfiguration={"Status": "Enabled"})
    primary, others = non_owner(trio, "doc", "cached-versions")
    reader = make_client(others[0])
    old, new = os.urandom(200_000), os.urandom(200_000)
    v1 = make_client(primary).put_object(Bucket="cached-versions", Key="doc", Body=old)
    v2 = make_client(primary).put_object(Bucket="cached-versions", Key="doc", Body=new)
    for _ in range(2):
        assert reader.get_object(Bucket="cached-versions", Key="doc")["Body"].read() == new
    by_id = reader.get_object(Bucket="cached-versions", Key="doc", VersionId=v1["VersionId"])
    assert by_id["Body"].read() == old
    assert by_id["VersionId"] == v1["VersionId"]
    latest = reader.get_object(Bucket="cached-versions", Key="doc", VersionId=v2["VersionId"])
    assert latest["Body"].read() == new


def fill_and_damage(trio, key, size, at):
    """Writes `key`, reads it through a non-owner (which keeps a copy), flips the copy's
    byte `at` on the disk; returns the reader gateway, its client, the body and the file."""
    primary, others = non_owner(trio, key)
    reader = others[0]
    s3 = make_client(reader)
    body = os.urandom(size)
    make_client(primary).put_object(Bucket="shared", Key=key, Body=body)
    before = set(copies_on_disk(reader))
    assert s3.get_object(Bucket="shared", Key=key)["Body"].read() == body
    made = wait_until(lambda: [p for p in copies_on_disk(reader) if p not in before],
                      what="the copy kept", srv=reader)
    assert len(made) == 1, made
    with open(made[0], "r+b") as f:
        f.seek(at)
        byte = f.read(1)
        f.seek(at)
        f.write(bytes([byte[0] ^ 0xFF]))
    return reader, s3, body, made[0]


def test_a_damaged_copy_is_dropped_and_the_owner_sends_the_bytes(trio):
    # The damage is in the first block read, before anything was sent: the owner sends
    # the bytes instead.
    reader, s3, body, copy = fill_and_damage(trio, "cached/damaged", 500_000, 1000)
    errors = events(reader, "error")
    assert s3.get_object(Bucket="shared", Key="cached/damaged")["Body"].read() == body
    settles_at(lambda: events(reader, "error"), errors + 1, reader, "the damage counted")
    assert copy not in copies_on_disk(reader)


def test_damage_found_mid_stream_cuts_that_read_short_and_drops_the_copy(trio):
    # Past the first block the client has the head and some bytes: it sees a short body
    # (as from any stream that breaks), never a wrong byte; the next read is whole.
    reader, s3, body, copy = fill_and_damage(trio, "cached/damaged-late", 3_000_000, 2_900_000)
    errors = events(reader, "error")
    with pytest.raises(getattr(botocore.exceptions, "ResponseStreamingError", Exception)):
        s3.get_object(Bucket="shared", Key="cached/damaged-late")["Body"].read()
    settles_at(lambda: events(reader, "error"), errors + 1, reader, "the damage counted")
    assert copy not in copies_on_disk(reader)
    assert s3.get_object(Bucket="shared", Key="cached/damaged-late")["Body"].read() == body


def test_infrequent_access_versions_are_not_cached(trio):
    primary, others = non_owner(trio, "cached/ia")
    reader = others[0]
    body = os.urandom(100_000)
    make_client(primary).put_object(Bucket="shared", Key="cached/ia", Body=body,
                                    StorageClass="STANDARD_IA")
    fills, from_owner = events(reader, "fill"), gets(reader, "owner")
    for _ in range(2):
        got = make_client(reader).get_object(Bucket="shared", Key="cached/ia")
        assert got["Body"].read() == body
    settles_at(lambda: gets(reader, "owner"), from_owner + 2, reader, "two reads counted")
    # A STANDARD key this gateway does not own, read after them, is the one copy kept (a
    # copy is kept just after its response, so the count alone could be read too early).
    key = next(k for k in (f"cached/after-ia-{i}" for i in range(100))
               if roles(trio, k)[2] is reader)
    make_client(roles(trio, key)[0]).put_object(Bucket="shared", Key=key, Body=body)
    assert make_client(reader).get_object(Bucket="shared", Key=key)["Body"].read() == body
    wait_until(lambda: events(reader, "fill") > fills, what="a copy kept", srv=reader)
    assert events(reader, "fill") == fills + 1
