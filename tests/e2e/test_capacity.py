"""Capacity and eviction of the hot tier (storage/engine/tier_caches.h): a strata whose hot
tier has a capacity of 1 MiB (high mark 95%, low mark 85%) in front of moto.

  - Dirty copies are never evicted: writes beyond the capacity while nothing is written
    back all stay on the hot tier and readable (the passes report themselves blocked);
    once flushed upstream, eviction brings the tier under the low mark and every object
    still reads byte-exact (evicted ones through the upstream).
  - Training epochs: a dataset 2.5x the capacity read in a new random order each epoch.
    After the first epoch the tier keeps a fixed set (TinyLFU admission refuses misses
    that are read no more often than what they would displace), so each later epoch hits
    about high mark x C / D of its reads, counted at the upstream as GETs not sent; the
    tier stays under its capacity throughout.
  - An object larger than the whole tier streams through and is not cached.
"""
import json
import os
import random

from conftest import admin, make_client, metric
from upstream import cold_config, wait_until

KiB = 1 << 10
MiB = 1 << 20
CAPACITY = MiB
OBJECT = 64 * KiB


def small_hot(upstream, delay):
    overrides = cold_config(upstream, delay)
    overrides["tiers"][0].update({"capacity": "1MiB", "high_watermark": 0.95,
                                  "low_watermark": 0.85})
    return overrides


def hot_bytes(srv, bucket):
    return sum(line["bytes"] for line in json.loads(admin(srv, "usage", "--json"))["buckets"]
               if line["bucket"] == bucket and line["tier"] == "hot")


def test_dirty_copies_stay_until_written_back_then_eviction_reaches_the_low_mark(
        upstream, strata_factory):
    srv = strata_factory(small_hot(upstream, "1h"))
    s3 = make_client(srv)
    s3.create_bucket(Bucket="ckpt")
    bodies = {f"shard-{i:02d}": os.urandom(OBJECT) for i in range(24)}  # 1.5 MiB
    for key, body in bodies.items():
        s3.put_object(Bucket="ckpt", Key=key, Body=body)
    assert hot_bytes(srv, "ckpt") == 24 * OBJECT
    wait_until(lambda: (metric(srv, "strata_eviction_blocked_total", tier="hot") or 0) >= 2,
               what="eviction passes to find nothing clean", srv=srv)
    assert hot_bytes(srv, "ckpt") == 24 * OBJECT  # nothing dirty went
    assert metric(srv, "strata_evictions_total", tier="hot") == 0

    admin(srv, "flush")
    wait_until(lambda: hot_bytes(srv, "ckpt") <= 0.85 * CAPACITY,
               what=lambda: f"the hot tier under its low mark: {hot_bytes(srv, 'ckpt')}", srv=srv)
    assert hot_bytes(srv, "ckpt") > 0.5 * CAPACITY  # evicted down to the mark, not emptied
    assert metric(srv, "strata_evictions_total", tier="hot") >= 9
    for key, body in bodies.items():
        assert s3.get_object(Bucket="ckpt", Key=key)["Body"].read() == body, key
    assert hot_bytes(srv, "ckpt") <= CAPACITY


def test_shuffled_epochs_keep_a_fixed_set_and_hit_near_the_optimum(upstream, strata_factory):
    upstream.client.create_bucket(Bucket="dataset")
    keys = [f"train/{i:03d}.bin" for i in range(40)]  # 2.5 MiB: D = 2.5 C
    bodies = {}
    for key in keys:
        bodies[key] = os.urandom(OBJECT)
        upstream.client.put_object(Bucket="dataset", Key=key, Body=bodies[key])
    # Learned prefetch off: this measures admission alone (a prefetch's upstream GETs would
    # count as misses here); test_prefetch.py covers the prefetcher.
    overrides = small_hot(upstream, "1s")
    overrides["prefetch"] = {"learned": False}
    srv = strata_factory(overrides)
    s3 = make_client(srv)
    rng = random.Random(5)
    hits = []
    for epoch in range(1, 5):
        order = keys[:]
        rng.shuffle(order)
        upstream.proxy.reset_counts()
        for key in order:
            assert s3.get_object(Bucket="dataset", Key=key)["Body"].read() == bodies[key]
            assert hot_bytes(srv, "dataset") <= CAPACITY
        hits.append(len(keys) - upstream.proxy.count("GET", "/dataset/"))
    # The tier holds floor(0.95 MiB / 64 KiB) = 15 of the 40 objects: 37.5% of the reads,
    # 94% of the optimum C / D = 40%. LRU would hit about (C/D)^2 / 2 = 8% here.
    assert hits[0] == 0, hits
    for h in hits[1:]:
        assert h >= 13, hits
    assert metric(srv, "strata_read_through_fills_total", tier="hot", decision="refused") > 0


def test_an_object_larger_than_the_tier_streams_through(upstream, strata_factory):
    upstream.client.create_bucket(Bucket="huge")
    body = os.urandom(2 * MiB)
    upstream.client.put_object(Bucket="huge", Key="model.bin", Body=body)
    srv = strata_factory(small_hot(upstream, "1s"))
    s3 = make_client(srv)
    for _ in range(2):
        assert s3.get_object(Bucket="huge", Key="model.bin")["Body"].read() == body
    assert hot_bytes(srv, "huge") == 0
