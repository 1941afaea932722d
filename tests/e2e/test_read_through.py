"""Transparent buckets: with an upstream configured, what is already in the upstream store
shows through strata, so pointing strata at an existing store needs nothing else.

  - ListBuckets includes the upstream's buckets; ListObjectsV2 merges the upstream listing
    with strata's own index (prefix, delimiter, paging), where the local index wins: keys
    written through strata and not yet pushed appear, keys deleted through strata and not
    yet pushed do not.
  - A GET (whole or ranged) or HEAD of an object strata never saw reads through, with the
    upstream's bytes, ETag, Content-Type and x-amz-meta-*; the copy it keeps serves the
    next GET even with the upstream gone; concurrent cold GETs fetch it from upstream once.
  - Absent keys and buckets are 404 NoSuchKey / NoSuchBucket.
  - `revalidate_after` on the s3 tier: a cached copy older than that is checked against the
    upstream (a conditional GET), so an upstream overwrite shows after the interval.

The upstream's content is written straight to moto (upstream.client) before strata starts.
"""
import hashlib
import os
import threading
import time


from conftest import admin, make_client, raises_s3
from upstream import wait_until

KiB, MiB = 1 << 10, 1 << 20


def seed(upstream, bucket, objects):
    """Creates `bucket` straight upstream with objects {key: bytes}."""
    upstream.client.create_bucket(Bucket=bucket)
    for key, body in objects.items():
        upstream.client.put_object(Bucket=bucket, Key=key, Body=body)


def list_all(s3, bucket, **kw):
    """(keys, common prefixes, {key: size}) of a listing, following continuation tokens."""
    keys, prefixes, sizes, token = [], [], {}, None
    while True:
        args = dict(Bucket=bucket, **kw)
        if token:
            args["ContinuationToken"] = token
        page = s3.list_objects_v2(**args)
        for o in page.get("Contents", []):
            keys.append(o["Key"])
            sizes[o["Key"]] = o["Size"]
        prefixes += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
        if not page.get("IsTruncated"):
            return keys, prefixes, sizes
        token = page["NextContinuationToken"]


def test_upstream_buckets_are_listed(upstream, cold_strata):
    upstream.client.create_bucket(Bucket="preexisting")
    srv = cold_strata(delay="60s")
    s3 = make_client(srv)
    names = [b["Name"] for b in s3.list_buckets()["Buckets"]]
    assert "preexisting" in names, names
    s3.head_bucket(Bucket="preexisting")
    s3.create_bucket(Bucket="made-here")
    names = [b["Name"] for b in s3.list_buckets()["Buckets"]]
    assert {"preexisting", "made-here"} <= set(names), names
    assert names == sorted(names), names


def test_listing_merges_upstream_and_pending_changes(upstream, cold_strata):
    lake = {"a.txt": b"a" * 10, "dir/x": b"x" * 20, "dir/y": b"y" * 30,
            "dir/sub/z": b"z" * 40, "zeta": b"zeta"}
    seed(upstream, "lake", lake)
    srv = cold_strata(delay="60s")   # nothing strata does below reaches the upstream
    s3 = make_client(srv)

    keys, prefixes, sizes = list_all(s3, "lake")
    assert keys == sorted(lake) and prefixes == []
    assert sizes == {k: len(v) for k, v in lake.items()}

    s3.put_object(Bucket="lake", Key="b.txt", Body=b"b" * 50)
    s3.put_object(Bucket="lake", Key="dir/w", Body=b"w" * 60)
    s3.put_object(Bucket="lake", Key="dir/x", Body=b"X" * 70)   # overwrite, not yet pushed
    s3.delete_object(Bucket="lake", Key="zeta")
    assert sorted(upstream.keys("lake")) == sorted(lake), "pushed despite the 60s delay"

    expected = {"a.txt": 10, "b.txt": 50, "dir/sub/z": 40, "dir/w": 60, "dir/x": 70,
                "dir/y": 30}
    keys, prefixes, sizes = list_all(s3, "lake")
    assert keys == sorted(expected) and prefixes == [], keys
    assert sizes == expected

    keys, prefixes, _ = list_all(s3, "lake", Prefix="dir/")
    assert keys == ["dir/sub/z", "dir/w", "dir/x", "dir/y"], keys
    keys, prefixes, _ = list_all(s3, "lake", Delimiter="/")
    assert (keys, prefixes) == (["a.txt", "b.txt"], ["dir/"])
    keys, prefixes, _ = list_all(s3, "lake", Prefix="dir/", Delimiter="/")
    assert (keys, prefixes) == (["dir/w", "dir/x", "dir/y"], ["dir/sub/"])
    keys, prefixes, _ = list_all(s3, "lake", Prefix="ze")
    assert (keys, prefixes) == ([], [])

    # Pages of two: the same merged sequence, no key twice, none lost at a page boundary.
    keys, _, _ = list_all(s3, "lake", MaxKeys=2)
    assert keys == sorted(expected), keys
    keys, _, _ = list_all(s3, "lake", StartAfter="b.txt")
    assert keys == ["dir/sub/z", "dir/w", "dir/x", "dir/y"], keys


def test_cold_get_and_head_read_through(upstream, cold_strata):
    whole = os.urandom(300 * KiB + 5)
    headed = os.urandom(1234)
    ranged = os.urandom(200 * KiB)
    upstream.client.create_bucket(Bucket="cold")
    upstream.client.put_object(Bucket="cold", Key="whole", Body=whole,
                               ContentType="application/x-parquet",
                               Metadata={"origin": "upstream", "shard": "7"})
    upstream.client.put_object(Bucket="cold", Key="headed", Body=headed, ContentType="text/x-e2e",
                               Metadata={"kind": "head"})
    upstream.client.put_object(Bucket="cold", Key="ranged", Body=ranged)
    # A multipart object upstream: its ETag is the upstream's "-2", not an MD5.
    mpu = upstream.client.create_multipart_upload(Bucket="cold", Key="parts")
    part_bodies = [os.urandom(5 * MiB), os.urandom(MiB)]
    parts = [{"PartNumber": i + 1, "ETag": upstream.client.upload_part(
        Bucket="cold", Key="parts", UploadId=mpu["UploadId"], PartNumber=i + 1,
        Body=b)["ETag"]} for i, b in enumerate(part_bodies)]
    upstream.client.complete_multipart_upload(Bucket="cold", Key="parts",
                                              UploadId=mpu["UploadId"],
                                              MultipartUpload={"Parts": parts})
    up_heads = {k: upstream.client.head_object(Bucket="cold", Key=k)
                for k in ("whole", "headed", "ranged", "parts")}

    srv = cold_strata(delay="60s")
    s3 = make_client(srv)

    got = s3.get_object(Bucket="cold", Key="whole")
    assert got["Body"].read() == whole
    assert got["ETag"] == up_heads["whole"]["ETag"]
    assert got["ContentType"] == "application/x-parquet"
    assert got["Metadata"] == {"origin": "upstream", "shard": "7"}
    assert got["ContentLength"] == len(whole)

    head = s3.head_object(Bucket="cold", Key="headed")   # HEAD first: never GET before
    assert head["ContentLength"] == len(headed)
    assert head["ETag"] == up_heads["headed"]["ETag"]
    assert head["ContentType"] == "text/x-e2e"
    assert head["Metadata"] == {"kind": "head"}
    assert s3.get_object(Bucket="cold", Key="headed")["Body"].read() == headed

    part = s3.get_object(Bucket="cold", Key="ranged", Range="bytes=1000-1999")
    assert part["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert part["Body"].read() == ranged[1000:2000]
    assert part["ContentRange"] == f"bytes 1000-1999/{len(ranged)}"
    tail = s3.get_object(Bucket="cold", Key="ranged", Range="bytes=-100")
    assert tail["Body"].read() == ranged[-100:]
    assert s3.get_object(Bucket="cold", Key="ranged")["Body"].read() == ranged

    got = s3.get_object(Bucket="cold", Key="parts")
    assert got["Body"].read() == b"".join(part_bodies)
    assert got["ETag"] == up_heads["parts"]["ETag"] and got["ETag"].endswith('-2"')


def test_second_get_is_served_locally(upstream, cold_strata):
    body = os.urandom(2 * MiB + 1)
    seed(upstream, "cache", {"obj": body})
    srv = cold_strata(delay="60s")
    s3 = make_client(srv)
    assert s3.get_object(Bucket="cache", Key="obj")["Body"].read() == body

    upstream.proxy.stop()
    assert s3.get_object(Bucket="cache", Key="obj")["Body"].read() == body
    assert s3.head_object(Bucket="cache", Key="obj")["ContentLength"] == len(body)
    part = s3.get_object(Bucket="cache", Key="obj", Range=f"bytes={MiB}-{MiB + 99}")
    assert part["Body"].read() == body[MiB:MiB + 100]


def test_concurrent_cold_gets_fetch_once(upstream, cold_strata):
    body = os.urandom(32 * MiB)
    digest = hashlib.sha256(body).hexdigest()
    seed(upstream, "herd", {"big": body})
    srv = cold_strata(delay="60s")
    upstream.proxy.reset_counts()

    results, errors = [None] * 8, []
    start = threading.Barrier(8, timeout=120)

    def get(i):
        try:
            client = make_client(srv)
            start.wait()
            got = client.get_object(Bucket="herd", Key="big")["Body"].read()
            results[i] = (len(got), hashlib.sha256(got).hexdigest())
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=get, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
    assert results == [(len(body), digest)] * 8
    gets = upstream.proxy.count("GET", "/herd/big", exact=True)
    assert gets == 1, f"{gets} upstream GETs of the object: {upstream.proxy.requests()}"


def test_absent_key_and_bucket(upstream, cold_strata):
    seed(upstream, "sparse", {"present": b"here"})
    srv = cold_strata(delay="60s")
    s3 = make_client(srv)
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket="sparse", Key="absent")
    with raises_s3("404", 404):
        s3.head_object(Bucket="sparse", Key="absent")
    with raises_s3("NoSuchBucket", 404):
        s3.get_object(Bucket="nowhere-at-all", Key="absent")
    with raises_s3("NoSuchBucket", 404):
        s3.list_objects_v2(Bucket="nowhere-at-all")
    assert s3.get_object(Bucket="sparse", Key="present")["Body"].read() == b"here"


def test_revalidation_after_the_interval(upstream, cold_strata):
    v1, v2 = os.urandom(100 * KiB), os.urandom(100 * KiB + 1)
    seed(upstream, "fresh", {"obj": v1, "steady": b"unchanged"})
    srv = cold_strata(delay="60s", tier={"revalidate_after": "2s"})
    s3 = make_client(srv)
    assert s3.get_object(Bucket="fresh", Key="obj")["Body"].read() == v1
    assert s3.get_object(Bucket="fresh", Key="steady")["Body"].read() == b"unchanged"

    upstream.client.put_object(Bucket="fresh", Key="obj", Body=v2)
    # Inside the interval the cached copy may still be served; either version is whole.
    assert s3.get_object(Bucket="fresh", Key="obj")["Body"].read() in (v1, v2)
    wait_until(lambda: s3.get_object(Bucket="fresh", Key="obj")["Body"].read() == v2, 15,
               "the upstream overwrite to show after revalidate_after", interval=0.25,
               srv=srv)
    head = s3.head_object(Bucket="fresh", Key="obj")
    assert head["ContentLength"] == len(v2)
    assert head["ETag"] == upstream.client.head_object(Bucket="fresh", Key="obj")["ETag"]

    # An unchanged object past the interval: checked upstream again, same bytes.
    before = (upstream.proxy.count("GET", "/fresh/steady", exact=True) +
              upstream.proxy.count("HEAD", "/fresh/steady", exact=True))
    time.sleep(2.5)   # past revalidate_after since the GET above cached it
    assert s3.get_object(Bucket="fresh", Key="steady")["Body"].read() == b"unchanged"
    after = (upstream.proxy.count("GET", "/fresh/steady", exact=True) +
             upstream.proxy.count("HEAD", "/fresh/steady", exact=True))
    assert after > before, f"no revalidation seen upstream: {upstream.proxy.requests()}"


def test_evicted_copy_reads_through_again(upstream, cold_strata):
    """A clean version may lose its local copy (strata-admin evict, the tier engine's
    eviction later): HEAD and listings still answer from the index without fetching
    bytes, the next GET reads them back through and restores the local copy."""
    import json
    from test_writeback import flush

    srv = cold_strata(delay="60s")
    s3 = make_client(srv)
    s3.create_bucket(Bucket="evict")
    body = os.urandom(3 * MiB + 7)
    put = s3.put_object(Bucket="evict", Key="ckpt", Body=body, ContentType="application/x-ckpt",
                        Metadata={"epoch": "3"})

    def evict():
        return json.loads(admin(srv, "evict", "evict", "ckpt"))["evicted"]

    # Dirty until pushed: its only copy is local, so it stays.
    assert evict() is False
    assert flush(srv, 60)[0] == 200
    assert evict() is True
    assert evict() is False   # nothing local left to free

    upstream.proxy.reset_counts()
    head = s3.head_object(Bucket="evict", Key="ckpt")
    assert head["ContentLength"] == len(body) and head["ETag"] == put["ETag"]
    assert head["ContentType"] == "application/x-ckpt" and head["Metadata"] == {"epoch": "3"}
    assert head["ResponseMetadata"]["HTTPHeaders"]["x-strata-writeback"] == "done"
    keys, _, sizes = list_all(s3, "evict")
    assert keys == ["ckpt"] and sizes == {"ckpt": len(body)}
    # The description comes from the index: no bytes were fetched (a pushed copy's first
    # read may cost one conditional HEAD, its revalidation).
    assert upstream.proxy.count("HEAD", "/evict/ckpt", exact=True) <= 1
    assert upstream.proxy.count("GET", "/evict/ckpt", exact=True) == 0

    got = s3.get_object(Bucket="evict", Key="ckpt")
    assert got["Body"].read() == body and got["ETag"] == put["ETag"]
    assert upstream.proxy.count("GET", "/evict/ckpt", exact=True) == 1

    upstream.proxy.stop()   # restored locally: no upstream needed any more
    assert s3.get_object(Bucket="evict", Key="ckpt")["Body"].read() == body
    part = s3.get_object(Bucket="evict", Key="ckpt", Range="bytes=100-199")
    assert part["Body"].read() == body[100:200]


def test_copies_of_objects_only_the_upstream_has(upstream, cold_strata):
    """CopyObject and UploadPartCopy from a key strata never saw, in a bucket it never saw,
    and from a version whose local copy was evicted: the source is read through onto the
    hot tier first, and the copy is byte-exact (and is itself written back)."""
    import json
    from test_writeback import flush

    seed_body = os.urandom(1 * MiB + 5)
    seed(upstream, "origin", {"data/seed.bin": seed_body})
    srv = cold_strata(delay="60s")
    s3 = make_client(srv)

    # The first request that names "origin" is the copy itself.
    s3.create_bucket(Bucket="dest")
    copied = s3.copy_object(Bucket="dest", Key="copy.bin",
                            CopySource={"Bucket": "origin", "Key": "data/seed.bin"})
    assert copied["CopyObjectResult"]["ETag"] == f'"{hashlib.md5(seed_body).hexdigest()}"'
    assert s3.get_object(Bucket="dest", Key="copy.bin")["Body"].read() == seed_body
    # The source is cached too: its next GET costs the upstream nothing.
    gets = upstream.proxy.count("GET", "/origin/data/seed.bin", exact=True)
    assert gets == 1
    assert s3.get_object(Bucket="origin", Key="data/seed.bin")["Body"].read() == seed_body
    assert upstream.proxy.count("GET", "/origin/data/seed.bin", exact=True) == gets

    # A part copied out of a key only the upstream has.
    seed(upstream, "parts", {"big.bin": os.urandom(6 * MiB)})
    big = upstream.body("parts", "big.bin")
    upload = s3.create_multipart_upload(Bucket="dest", Key="assembled")
    part = s3.upload_part_copy(Bucket="dest", Key="assembled", UploadId=upload["UploadId"],
                               PartNumber=1, CopySource={"Bucket": "parts", "Key": "big.bin"},
                               CopySourceRange="bytes=0-5242879")
    last = s3.upload_part(Bucket="dest", Key="assembled", UploadId=upload["UploadId"],
                          PartNumber=2, Body=b"tail")
    s3.complete_multipart_upload(
        Bucket="dest", Key="assembled", UploadId=upload["UploadId"],
        MultipartUpload={"Parts": [
            {"PartNumber": 1, "ETag": part["CopyPartResult"]["ETag"]},
            {"PartNumber": 2, "ETag": last["ETag"]}]})
    assert s3.get_object(Bucket="dest", Key="assembled")["Body"].read() == big[:5 * MiB] + b"tail"

    # An evicted version: fetched back, then copied.
    body = os.urandom(300 * KiB)
    s3.put_object(Bucket="dest", Key="evicted", Body=body)
    assert flush(srv, 60)[0] == 200
    assert json.loads(admin(srv, "evict", "dest", "evicted"))["evicted"] is True
    s3.copy_object(Bucket="dest", Key="evicted-copy",
                   CopySource={"Bucket": "dest", "Key": "evicted"})
    assert s3.get_object(Bucket="dest", Key="evicted-copy")["Body"].read() == body

    # Copies are writes like any other: pushed, byte-exact.
    assert flush(srv, 60)[0] == 200
    assert upstream.body("dest", "copy.bin") == seed_body
    assert upstream.body("dest", "evicted-copy") == body
    assert upstream.body("dest", "assembled") == big[:5 * MiB] + b"tail"
    # Absent upstream too: S3's errors.
    with raises_s3("NoSuchKey", 404):
        s3.copy_object(Bucket="dest", Key="x", CopySource={"Bucket": "origin", "Key": "nope"})
    with raises_s3("NoSuchBucket", 404):
        s3.copy_object(Bucket="dest", Key="x", CopySource={"Bucket": "nowhere", "Key": "k"})
