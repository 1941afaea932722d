"""The upstream process itself dies and comes back, its data intact.

moto_server keeps its data in memory, so a moto that stops is a new, empty upstream. Here
the upstream is a second strata (local tiers only), which keeps its data across
restarts: strata in front of it must ride out its crash (SIGKILL) and its restart, with
reads and writes going on, and the backlog must drain by itself once it is back, leaving
the upstream bit-exact with what the front acknowledged. The same pair also shows that
the write-back speaks S3 to an upstream other than moto, versioned buckets included, and
over HTTPS to an upstream whose certificate only the tier's `ca_file` vouches for.
"""
import os
import random

import botocore.exceptions
import pytest

from conftest import ADMIN_AK, ADMIN_SK, make_client, raises_s3, self_signed_cert
from test_writeback import backlog, flush
from upstream import DEFAULT_CONF, tomllib, wait_until

pytestmark = pytest.mark.upstream   # with the other write-back tests, in e2e_new

KiB = 1 << 10
DRAIN_TIMEOUT = 90.0   # the worker's retry backoff reaches a minute during an outage


def front_config(upstream_srv, delay="1s", **cold_keys):
    """strata_factory overrides: the default local tiers plus a tier "cold" of kind "s3"
    at `upstream_srv`, with its admin credentials (and any other keys for the tier)."""
    default = tomllib.loads(DEFAULT_CONF.read_text())
    tiers = [{k: v for k, v in t.items() if k != "path"} for t in default["tiers"]
             if t.get("kind") == "local"]
    cold = {"name": "cold", "kind": "s3", "endpoint": upstream_srv.endpoint,
            "access_key": ADMIN_AK, "secret_key": ADMIN_SK, "region": upstream_srv.region,
            **cold_keys}
    return {"tiers": tiers + [cold], "writeback": {"delay": delay}}


def contents(s3, bucket):
    """{key: bytes} of every object in the bucket."""
    out = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for obj in page.get("Contents", []):
            out[obj["Key"]] = s3.get_object(Bucket=bucket, Key=obj["Key"])["Body"].read()
    return out


def test_upstream_crash_and_restart_loses_nothing(strata_factory):
    up = strata_factory(name="upstream")
    front = strata_factory(front_config(up), name="front")
    s3, s3_up = make_client(front), make_client(up)
    s3.create_bucket(Bucket="chain")
    s3_up.head_bucket(Bucket="chain")   # created upstream first

    rng = random.Random(7)
    acked = {}
    for i in range(6):
        acked[f"before/{i}"] = os.urandom(rng.randrange(1, 300 * KiB))
        s3.put_object(Bucket="chain", Key=f"before/{i}", Body=acked[f"before/{i}"])
    status, _ = flush(front, 60)
    assert status == 200
    assert contents(s3_up, "chain") == acked

    up.kill()   # the upstream crashes
    for i in range(6):
        acked[f"during/{i}"] = os.urandom(rng.randrange(1, 300 * KiB))
        s3.put_object(Bucket="chain", Key=f"during/{i}", Body=acked[f"during/{i}"])
    acked["before/0"] = b"overwritten while the upstream was down"
    s3.put_object(Bucket="chain", Key="before/0", Body=acked["before/0"])
    s3.delete_object(Bucket="chain", Key="before/1")
    del acked["before/1"]
    # Everything acknowledged reads back from the front meanwhile.
    for key, body in acked.items():
        assert s3.get_object(Bucket="chain", Key=key)["Body"].read() == body, key
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket="chain", Key="before/1")
    wait_until(lambda: backlog(front)["failures"] > 0, 30, "a failed push", srv=front)
    assert backlog(front)["objects"] == 8

    up.start()   # same port, same data directory

    def drained():
        doc = backlog(front)
        return doc if doc["objects"] == 0 else None

    wait_until(drained, DRAIN_TIMEOUT, lambda: f"the backlog to drain: {backlog(front)}",
               srv=front)
    assert contents(s3_up, "chain") == acked
    assert contents(s3, "chain") == acked


def test_versioned_history_reaches_a_strata_upstream(strata_factory):
    up = strata_factory(name="upstream")
    front = strata_factory(front_config(up), name="front")
    s3, s3_up = make_client(front), make_client(up)
    s3.create_bucket(Bucket="vchain")
    s3.put_bucket_versioning(Bucket="vchain", VersioningConfiguration={"Status": "Enabled"})
    assert s3_up.get_bucket_versioning(Bucket="vchain").get("Status") == "Enabled"
    bodies = [os.urandom(10 * KiB + i) for i in range(3)]
    ids = [s3.put_object(Bucket="vchain", Key="k", Body=b)["VersionId"] for b in bodies]
    s3.delete_object(Bucket="vchain", Key="k", VersionId=ids[1])
    s3.delete_object(Bucket="vchain", Key="k")   # a delete marker on top
    status, doc = flush(front, 60)
    assert status == 200, doc
    # strata lists a key's versions in true order (newest first), markers included.
    page = s3_up.list_object_versions(Bucket="vchain", Prefix="k")
    markers = page.get("DeleteMarkers", [])
    assert len(markers) == 1 and markers[0]["IsLatest"]
    versions = page["Versions"]
    got = [s3_up.get_object(Bucket="vchain", Key="k", VersionId=v["VersionId"])["Body"].read()
           for v in versions]
    assert got == [bodies[2], bodies[0]]


def test_https_upstream_trusted_through_ca_file(strata_factory, tmp_path):
    crt, key = self_signed_cert(tmp_path)
    up = strata_factory({"server": {"tls_cert": str(crt), "tls_key": str(key)}}, name="upstream")
    assert up.endpoint.startswith("https://")
    s3_up = make_client(up)   # trusts the certificate: conftest passes it as `verify`
    s3_up.create_bucket(Bucket="secure")
    body = os.urandom(200 * KiB)
    s3_up.put_object(Bucket="secure", Key="seeded", Body=body)

    front = strata_factory(front_config(up, ca_file=str(crt)), name="front")
    s3 = make_client(front)
    assert s3.get_object(Bucket="secure", Key="seeded")["Body"].read() == body   # read through
    s3.put_object(Bucket="secure", Key="written", Body=body[::-1])
    status, doc = flush(front, 60)
    assert status == 200, doc
    assert s3_up.get_object(Bucket="secure", Key="written")["Body"].read() == body[::-1]

    # Without the CA the upstream's certificate is refused: nothing reads through, and the
    # refusal is an error, not a silent plain-text fallback.
    doubting = strata_factory(front_config(up), name="doubting")
    with pytest.raises(botocore.exceptions.ClientError) as refused:
        make_client(doubting).get_object(Bucket="secure", Key="seeded")
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 503
    assert "certificate verify failed" in refused.value.response["Error"]["Message"]
    # The request's log line says why, for the operator.
    assert 'detail="upstream' in doubting.logs() and "certificate verify failed" in doubting.logs()
