"""Write-back of versioned buckets: the upstream's version history follows strata's.

In a bucket with versioning (turned on through strata, or found on when strata adopts an
upstream bucket) every version and delete marker is pushed, oldest first, as its own
upstream version; a version deleted by id through strata is deleted by its upstream id;
an older version whose local copy was evicted reads back by that id. Upstream version ids
are the upstream's own, so the tests compare histories by content and order.

The upstream is a real moto_server (upstream.py); the tests read it directly with boto3.
"""
import hashlib
import json
import os

import pytest

from conftest import make_client, raises_s3
from test_writeback import admin_request, flush, wb_state
from upstream import wait_until

pytestmark = pytest.mark.upstream

KiB = 1 << 10
PUSH_TIMEOUT = 30.0


def md5(body):
    return hashlib.md5(body).hexdigest()


def flushed(srv):
    status, doc = flush(srv, 60)
    assert status == 200, doc
    return doc


def strata_history(s3, bucket, key):
    """[(is_marker, etag or None)] of key, newest first, as strata lists it."""
    page = s3.list_object_versions(Bucket=bucket, Prefix=key)
    rows = [(False, v["ETag"].strip('"'), v["LastModified"]) for v in page.get("Versions", [])
            if v["Key"] == key]
    rows += [(True, None, m["LastModified"]) for m in page.get("DeleteMarkers", [])
             if m["Key"] == key]
    # Both lists are newest first; merge them by time, markers after versions of the
    # same second (strata lists them in true order; the tests keep a gap between writes).
    return [(marker, etag) for marker, etag, _ in sorted(rows, key=lambda r: r[2], reverse=True)]


def upstream_history(upstream, bucket, key):
    """[(is_marker, etag or None, version_id)] of key upstream, newest first, with the
    body of each version checked against its ETag."""
    page = upstream.client.list_object_versions(Bucket=bucket, Prefix=key)
    rows = [(False, v["ETag"].strip('"'), v["VersionId"], v["LastModified"])
            for v in page.get("Versions", []) if v["Key"] == key]
    rows += [(True, None, m["VersionId"], m["LastModified"])
             for m in page.get("DeleteMarkers", []) if m["Key"] == key]
    rows.sort(key=lambda r: r[3], reverse=True)
    for marker, etag, version_id, _ in rows:
        if not marker:
            body = upstream.client.get_object(Bucket=bucket, Key=key,
                                              VersionId=version_id)["Body"].read()
            assert md5(body) == etag, (version_id, etag)
    return [(marker, etag, version_id) for marker, etag, version_id, _ in rows]


def put(s3, bucket, key, body):
    return s3.put_object(Bucket=bucket, Key=key, Body=body)["VersionId"]


def pause():
    """S3 times have one-second resolution: a gap keeps the histories' order visible in
    LastModified, which is all list_object_versions lets a client sort markers by."""
    import time
    time.sleep(1.1)


def test_versioning_is_mirrored_and_every_version_goes_up_in_order(upstream, cold_strata):
    srv = cold_strata(delay="1s")
    s3 = make_client(srv)
    s3.create_bucket(Bucket="hist")
    s3.put_bucket_versioning(Bucket="hist", VersioningConfiguration={"Status": "Enabled"})
    assert upstream.client.get_bucket_versioning(Bucket="hist").get("Status") == "Enabled"

    bodies = [os.urandom(20 * KiB + i) for i in range(3)]
    v1 = put(s3, "hist", "k", bodies[0])
    pause()
    put(s3, "hist", "k", bodies[1])
    flushed(srv)
    assert [(m, e) for m, e, _ in upstream_history(upstream, "hist", "k")] == [
        (False, md5(bodies[1])), (False, md5(bodies[0]))]
    assert wb_state(s3, "hist", "k") == "done"

    # A delete marker and a newer version, all inside one delay: none of them coalesce.
    pause()
    s3.delete_object(Bucket="hist", Key="k")
    pause()
    put(s3, "hist", "k", bodies[2])
    # v1 went up already: deleting it by id deletes its upstream version too.
    s3.delete_object(Bucket="hist", Key="k", VersionId=v1)
    flushed(srv)
    expected = [(False, md5(bodies[2])), (True, None), (False, md5(bodies[1]))]
    assert strata_history(s3, "hist", "k") == expected
    assert [(m, e) for m, e, _ in upstream_history(upstream, "hist", "k")] == expected
    # The current upstream object is the newest version.
    assert upstream.body("hist", "k") == bodies[2]


def test_versions_deleted_before_their_push_never_go_up(upstream, cold_strata):
    srv = cold_strata(delay="3s")
    s3 = make_client(srv)
    s3.create_bucket(Bucket="brief")
    s3.put_bucket_versioning(Bucket="brief", VersioningConfiguration={"Status": "Enabled"})
    keep = os.urandom(8 * KiB)
    gone = put(s3, "brief", "k", os.urandom(8 * KiB))
    pause()
    put(s3, "brief", "k", keep)
    s3.delete_object(Bucket="brief", Key="k", VersionId=gone)
    flushed(srv)
    assert [(m, e) for m, e, _ in upstream_history(upstream, "brief", "k")] == [
        (False, md5(keep))]
    assert upstream.proxy.count("PUT", "/brief/k", exact=True) == 1, upstream.proxy.requests()


def test_evicted_older_version_reads_back_by_its_upstream_id(upstream, cold_strata):
    srv = cold_strata(delay="1s")
    s3 = make_client(srv)
    s3.create_bucket(Bucket="evict")
    s3.put_bucket_versioning(Bucket="evict", VersioningConfiguration={"Status": "Enabled"})
    old_body, new_body = os.urandom(64 * KiB), os.urandom(64 * KiB + 1)
    old = put(s3, "evict", "k", old_body)
    pause()
    put(s3, "evict", "k", new_body)
    flushed(srv)

    resp = admin_request(srv, "POST", "/_strata/admin/evict",
                         [("bucket", "evict"), ("key", "k"), ("versionId", old)])
    assert resp.status == 200 and json.loads(resp.body) == {"evicted": True}, resp
    upstream_gets = upstream.proxy.count("GET", "/evict/k", exact=True)
    # The older version, not the current one, comes back: by its upstream version id.
    got = s3.get_object(Bucket="evict", Key="k", VersionId=old)
    assert got["Body"].read() == old_body
    assert got["VersionId"] == old
    assert upstream.proxy.count("GET", "/evict/k", exact=True) == upstream_gets + 1
    # Restored: the next read is local.
    assert s3.get_object(Bucket="evict", Key="k", VersionId=old)["Body"].read() == old_body
    assert upstream.proxy.count("GET", "/evict/k", exact=True) == upstream_gets + 1
    assert s3.get_object(Bucket="evict", Key="k")["Body"].read() == new_body


def test_adopted_versioned_bucket_keeps_versioning(upstream, cold_strata):
    upstream.client.create_bucket(Bucket="found")
    upstream.client.put_bucket_versioning(Bucket="found",
                                          VersioningConfiguration={"Status": "Enabled"})
    before = os.urandom(4 * KiB)
    upstream.client.put_object(Bucket="found", Key="k", Body=before)

    srv = cold_strata(delay="1s")
    s3 = make_client(srv)
    assert s3.get_object(Bucket="found", Key="k")["Body"].read() == before
    assert s3.get_bucket_versioning(Bucket="found").get("Status") == "Enabled"
    after = os.urandom(4 * KiB)
    pause()
    s3.put_object(Bucket="found", Key="k", Body=after)
    flushed(srv)
    # The upstream's history grew by one version: nothing of it was overwritten.
    assert [(m, e) for m, e, _ in upstream_history(upstream, "found", "k")] == [
        (False, md5(after)), (False, md5(before))]


def test_suspending_versioning_is_mirrored(upstream, cold_strata):
    srv = cold_strata(delay="1s")
    s3 = make_client(srv)
    s3.create_bucket(Bucket="susp")
    s3.put_bucket_versioning(Bucket="susp", VersioningConfiguration={"Status": "Enabled"})
    s3.put_bucket_versioning(Bucket="susp", VersioningConfiguration={"Status": "Suspended"})
    assert upstream.client.get_bucket_versioning(Bucket="susp").get("Status") == "Suspended"
    first, second = os.urandom(KiB), os.urandom(KiB + 1)
    s3.put_object(Bucket="susp", Key="k", Body=first)
    flushed(srv)
    s3.put_object(Bucket="susp", Key="k", Body=second)
    flushed(srv)
    # Suspended: each PUT replaces the "null" version, here and upstream.
    history = upstream_history(upstream, "susp", "k")
    assert [(m, e, v) for m, e, v in history] == [(False, md5(second), "null")]
    with raises_s3("NoSuchBucket", 404):
        s3.put_bucket_versioning(Bucket="nothere",
                                 VersioningConfiguration={"Status": "Enabled"})
    wait_until(lambda: wb_state(s3, "susp", "k") == "done", PUSH_TIMEOUT, "HEAD to say done",
               srv=srv)
