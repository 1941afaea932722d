"""RestoreObject (POST ?restore) and x-amz-restore, against strata in front of moto with a
lifecycle day of one second (restore Days count lifecycle days).

  - A GLACIER object, written back and so without a local copy, is restored: 202, HEAD
    answers x-amz-restore ongoing-request="true" then "false" with an expiry date, the
    copy is on the hot tier (usage) and a GET is served with the upstream cut. A second
    restore answers 200 and sets a new expiry. The restored copy is pinned: eviction
    refuses it until the expiry passes, then evicts it.
  - While the upstream is unreachable the fetch keeps trying: HEAD says ongoing, a second
    restore is 409 RestoreAlreadyInProgress, and once the upstream returns the restore
    completes by itself.
  - A bucket tagged strata:require-restore=true behaves as Glacier: a GET of a GLACIER
    object without a local copy, and a copy from it, are 403 InvalidObjectState until a
    restore lands; then both work. Without the tag the GET reads through.
  - A STANDARD object: 403 InvalidObjectState. A missing key: 404. Malformed bodies
    (raw requests: no Days, Days 0, unknown elements, a bad Tier, not XML): 400
    MalformedXML; a SELECT restore: 501 NotImplemented.
"""
import json
import os
import time

import pytest

import s3sign
from conftest import ADMIN_AK, ADMIN_SK, admin, make_client, raises_s3, raw_exchange
from upstream import cold_config, wait_until

KiB = 1 << 10


@pytest.fixture
def srv(upstream, strata_factory):
    overrides = cold_config(upstream, "0s")
    overrides["lifecycle"] = {"day": "1s", "interval": "1s"}
    return strata_factory(overrides)


def hot_objects(srv, bucket):
    report = json.loads(admin(srv, "usage", "--json"))
    return sum(l["objects"] for l in report["buckets"]
               if l["bucket"] == bucket and l["tier"] == "hot")


def glacier_object(srv, s3, bucket, key, body):
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key=key, Body=body, StorageClass="GLACIER")
    # Written back, then its local copy dropped (the class lives upstream).
    wait_until(lambda: hot_objects(srv, bucket) == 0, what="the GLACIER copy to leave hot",
               srv=srv)


def restore_header(s3, bucket, key):
    return s3.head_object(Bucket=bucket, Key=key).get("Restore")


def test_restore_brings_a_cold_object_back_and_pins_it(srv, upstream):
    s3 = make_client(srv)
    body = os.urandom(300 * KiB)
    glacier_object(srv, s3, "arch", "ckpt", body)
    assert restore_header(s3, "arch", "ckpt") is None
    res = s3.restore_object(Bucket="arch", Key="ckpt", RestoreRequest={"Days": 30})
    assert res["ResponseMetadata"]["HTTPStatusCode"] == 202
    header = wait_until(
        lambda: (h := restore_header(s3, "arch", "ckpt")) and 'ongoing-request="false"' in h and h,
        what="the restore to complete", srv=srv)
    assert 'expiry-date="' in header and header.endswith('GMT"'), header
    assert hot_objects(srv, "arch") == 1
    assert s3.head_object(Bucket="arch", Key="ckpt")["StorageClass"] == "GLACIER"
    upstream.proxy.stop()
    try:
        assert s3.get_object(Bucket="arch", Key="ckpt")["Body"].read() == body
    finally:
        upstream.proxy.start()
    # Again: 200, a new expiry.
    res = s3.restore_object(Bucket="arch", Key="ckpt", RestoreRequest={"Days": 60})
    assert res["ResponseMetadata"]["HTTPStatusCode"] == 200
    # Pinned: an eviction refuses it.
    assert '"evicted":false' in admin(srv, "evict", "arch", "ckpt")
    assert hot_objects(srv, "arch") == 1


def test_the_pin_ends_at_the_expiry(srv):
    s3 = make_client(srv)
    body = os.urandom(10 * KiB)
    glacier_object(srv, s3, "short", "k", body)
    s3.restore_object(Bucket="short", Key="k", RestoreRequest={"Days": 1})
    # Landed (on a loaded machine perhaps after its one-second expiry already).
    wait_until(lambda: hot_objects(srv, "short") == 1, what="the restore to land", srv=srv)
    # One second "days", rounded up to the next boundary: gone within about 2 s.
    wait_until(lambda: restore_header(s3, "short", "k") is None, timeout=10,
               what="x-amz-restore to go after the expiry", srv=srv)
    assert '"evicted":true' in admin(srv, "evict", "short", "k")
    assert hot_objects(srv, "short") == 0
    assert s3.get_object(Bucket="short", Key="k")["Body"].read() == body  # reads through


def test_restore_during_an_outage_is_in_progress_then_retried(srv, upstream):
    s3 = make_client(srv)
    body = os.urandom(50 * KiB)
    glacier_object(srv, s3, "outage", "k", body)
    upstream.proxy.stop()
    try:
        res = s3.restore_object(Bucket="outage", Key="k", RestoreRequest={"Days": 3600})
        assert res["ResponseMetadata"]["HTTPStatusCode"] == 202
        assert restore_header(s3, "outage", "k") == 'ongoing-request="true"'
        time.sleep(3)  # several failed attempts
        assert restore_header(s3, "outage", "k") == 'ongoing-request="true"'
        with raises_s3("RestoreAlreadyInProgress", 409):
            s3.restore_object(Bucket="outage", Key="k", RestoreRequest={"Days": 3600})
        assert hot_objects(srv, "outage") == 0
    finally:
        upstream.proxy.start()
    wait_until(lambda: 'ongoing-request="false"' in (restore_header(s3, "outage", "k") or ""),
               timeout=60, what="the restore to complete once the upstream is back", srv=srv)
    assert hot_objects(srv, "outage") == 1
    assert s3.get_object(Bucket="outage", Key="k")["Body"].read() == body


def test_a_bucket_can_require_a_restore_before_a_get(srv):
    s3 = make_client(srv)
    body = os.urandom(40 * KiB)
    glacier_object(srv, s3, "vault", "k", body)
    s3.put_bucket_tagging(Bucket="vault", Tagging={"TagSet": [
        {"Key": "strata:require-restore", "Value": "true"}]})
    with raises_s3("InvalidObjectState", 403):
        s3.get_object(Bucket="vault", Key="k")
    with raises_s3("InvalidObjectState", 403):
        s3.copy_object(Bucket="vault", Key="copy", CopySource={"Bucket": "vault", "Key": "k"})
    assert s3.head_object(Bucket="vault", Key="k")["StorageClass"] == "GLACIER"  # HEAD works
    assert hot_objects(srv, "vault") == 0  # nothing was read through
    s3.restore_object(Bucket="vault", Key="k", RestoreRequest={"Days": 3600})
    wait_until(lambda: 'ongoing-request="false"' in (restore_header(s3, "vault", "k") or ""),
               what="the restore to complete", srv=srv)
    assert s3.get_object(Bucket="vault", Key="k")["Body"].read() == body
    s3.copy_object(Bucket="vault", Key="copy", CopySource={"Bucket": "vault", "Key": "k"})
    assert s3.get_object(Bucket="vault", Key="copy")["Body"].read() == body

    # Tag "false" (or none): a cold object reads through as before.
    glacier_object(srv, s3, "open", "k", body)
    s3.put_bucket_tagging(Bucket="open", Tagging={"TagSet": [
        {"Key": "strata:require-restore", "Value": "false"}]})
    assert s3.get_object(Bucket="open", Key="k")["Body"].read() == body


def test_restore_of_other_classes_and_missing_keys(srv):
    s3 = make_client(srv)
    s3.create_bucket(Bucket="plain")
    s3.put_object(Bucket="plain", Key="hot", Body=b"x")
    with raises_s3("InvalidObjectState", 403):
        s3.restore_object(Bucket="plain", Key="hot", RestoreRequest={"Days": 1})
    with raises_s3("NoSuchKey", 404):
        s3.restore_object(Bucket="plain", Key="missing", RestoreRequest={"Days": 1})
    with raises_s3("NoSuchBucket", 404):
        s3.restore_object(Bucket="nobucket", Key="k", RestoreRequest={"Days": 1})


@pytest.mark.parametrize("body,code,status", [
    (b"<RestoreRequest></RestoreRequest>", "MalformedXML", 400),
    (b"<RestoreRequest><Days>0</Days></RestoreRequest>", "MalformedXML", 400),
    (b"<RestoreRequest><Days>-3</Days></RestoreRequest>", "MalformedXML", 400),
    (b"<RestoreRequest><Days>ten</Days></RestoreRequest>", "MalformedXML", 400),
    (b"<RestoreRequest><Days>1</Days><Days>2</Days></RestoreRequest>", "MalformedXML", 400),
    (b"<RestoreRequest><Days>1</Days><Bogus/></RestoreRequest>", "MalformedXML", 400),
    (b"<RestoreRequest><Days>1</Days><GlacierJobParameters><Tier>Fast</Tier>"
     b"</GlacierJobParameters></RestoreRequest>", "MalformedXML", 400),
    (b"<RestoreRequest><Days>1</Days><GlacierJobParameters/></RestoreRequest>",
     "MalformedXML", 400),
    (b"<Restore><Days>1</Days></Restore>", "MalformedXML", 400),
    (b"<RestoreRequest><Days>1", "MalformedXML", 400),
    (b"not xml at all", "MalformedXML", 400),
    (b"<RestoreRequest><Type>SELECT</Type></RestoreRequest>", "NotImplemented", 501),
])
def test_malformed_restore_requests(srv, body, code, status):
    s3 = make_client(srv)
    s3.create_bucket(Bucket="raw")
    s3.put_object(Bucket="raw", Key="k", Body=b"x", StorageClass="GLACIER")
    signer = s3sign.SigV4(ADMIN_AK, ADMIN_SK, srv.region)
    req = s3sign.signed_request_bytes(signer, "POST", srv.netloc, "/raw/k", [("restore", "")],
                                      body=body)
    resp = raw_exchange(srv, req)
    assert resp is not None and resp.status == status, resp
    assert resp.code == code, resp
    assert restore_header(s3, "raw", "k") is None  # nothing changed
