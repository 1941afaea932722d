"""Usage and cost: objects and bytes per bucket and tier, and the month's cost at each
tier's price_per_gb_month, from `strata-admin --config F usage` (a table; JSON with
--json) and /metrics.

  - Counts follow every change: PUTs, overwrites, versions (each counts; delete markers do
    not), parts of uploads in progress (bytes, no object) until completed or aborted,
    deletes, a warm storage class (the warm tier's row), the bucket's deletion.
  - Cost is bytes / 2^30 x the tier's price, per line and in total.
  - They commit with the data: a server killed (SIGKILL) while clients write restarts with
    counters equal to what a listing of the surviving objects adds up to.
  - With an upstream: a written-back object counts on the hot tier and the upstream; an
    evicted one only on the upstream.
"""
import json
import re
import threading
import time

import pytest

from conftest import admin, make_client, metric, run_admin, unique_bucket
from upstream import wait_until

GiB = float(1 << 30)
HOT_PRICE = 0.8   # conf/strata.toml
WARM_PRICE = 0.25


def usage(srv):
    return json.loads(admin(srv, "usage", "--json"))


def usage_table(srv):
    return admin(srv, "usage")


def bucket_rows(srv, bucket):
    """{tier: (objects, bytes)} of one bucket."""
    return {line["tier"]: (line["objects"], line["bytes"])
            for line in usage(srv)["buckets"] if line["bucket"] == bucket}


@pytest.fixture
def srv(strata_factory):
    return strata_factory()


def test_puts_overwrites_and_deletes_move_the_counters(srv):
    s3 = make_client(srv)
    b = unique_bucket("usage")
    s3.create_bucket(Bucket=b)
    assert bucket_rows(srv, b) == {}
    s3.put_object(Bucket=b, Key="a", Body=b"x" * 1000)
    s3.put_object(Bucket=b, Key="b", Body=b"y" * 24)
    assert bucket_rows(srv, b) == {"hot": (2, 1024)}
    s3.put_object(Bucket=b, Key="a", Body=b"z" * 100)
    assert bucket_rows(srv, b) == {"hot": (2, 124)}
    s3.put_object(Bucket=b, Key="ia", Body=b"w" * 50, StorageClass="STANDARD_IA")
    assert bucket_rows(srv, b) == {"hot": (2, 124), "warm": (1, 50)}
    s3.delete_object(Bucket=b, Key="a")
    s3.delete_object(Bucket=b, Key="ia")
    assert bucket_rows(srv, b) == {"hot": (1, 24)}
    s3.delete_object(Bucket=b, Key="b")
    assert bucket_rows(srv, b) == {}
    s3.delete_bucket(Bucket=b)
    assert bucket_rows(srv, b) == {}


def test_versions_count_and_delete_markers_do_not(srv):
    s3 = make_client(srv)
    b = unique_bucket("usage-ver")
    s3.create_bucket(Bucket=b)
    s3.put_bucket_versioning(Bucket=b, VersioningConfiguration={"Status": "Enabled"})
    v1 = s3.put_object(Bucket=b, Key="k", Body=b"1" * 10)["VersionId"]
    s3.put_object(Bucket=b, Key="k", Body=b"2" * 20)
    s3.delete_object(Bucket=b, Key="k")  # a marker
    assert bucket_rows(srv, b) == {"hot": (2, 30)}
    s3.delete_object(Bucket=b, Key="k", VersionId=v1)
    assert bucket_rows(srv, b) == {"hot": (1, 20)}


def test_parts_count_until_completed_or_aborted(srv):
    s3 = make_client(srv)
    b = unique_bucket("usage-mpu")
    s3.create_bucket(Bucket=b)
    part = 5 << 20
    up = s3.create_multipart_upload(Bucket=b, Key="big")["UploadId"]
    e1 = s3.upload_part(Bucket=b, Key="big", UploadId=up, PartNumber=1, Body=b"a" * part)["ETag"]
    e2 = s3.upload_part(Bucket=b, Key="big", UploadId=up, PartNumber=2, Body=b"b" * 7)["ETag"]
    assert bucket_rows(srv, b) == {"hot": (0, part + 7)}
    s3.complete_multipart_upload(Bucket=b, Key="big", UploadId=up, MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]})
    assert bucket_rows(srv, b) == {"hot": (1, part + 7)}
    up = s3.create_multipart_upload(Bucket=b, Key="other")["UploadId"]
    s3.upload_part(Bucket=b, Key="other", UploadId=up, PartNumber=1, Body=b"c" * 99)
    assert bucket_rows(srv, b) == {"hot": (1, part + 7 + 99)}
    s3.abort_multipart_upload(Bucket=b, Key="other", UploadId=up)
    assert bucket_rows(srv, b) == {"hot": (1, part + 7)}


def test_cost_table_and_metrics(srv):
    s3 = make_client(srv)
    b = unique_bucket("usage-cost")
    s3.create_bucket(Bucket=b)
    s3.put_object(Bucket=b, Key="hot", Body=b"h" * 3000)
    s3.put_object(Bucket=b, Key="warm", Body=b"w" * 5000, StorageClass="STANDARD_IA")
    report = usage(srv)
    lines = {(l["bucket"], l["tier"]): l for l in report["buckets"]}
    assert lines[(b, "hot")]["cost_per_month"] == pytest.approx(3000 / GiB * HOT_PRICE, abs=1e-6)
    assert lines[(b, "warm")]["cost_per_month"] == pytest.approx(5000 / GiB * WARM_PRICE, abs=1e-6)
    tiers = {t["tier"]: t for t in report["tiers"]}
    assert set(tiers) == {"hot", "warm"}
    assert tiers["hot"]["kind"] == "local" and tiers["hot"]["capacity"] == 20 << 30
    assert tiers["hot"]["price_per_gb_month"] == pytest.approx(HOT_PRICE)
    assert tiers["hot"]["bytes"] == sum(l["bytes"] for l in report["buckets"] if l["tier"] == "hot")
    assert report["cost_per_month"] == pytest.approx(
        sum(t["cost_per_month"] for t in tiers.values()), abs=1e-6)

    table = usage_table(srv)
    assert re.search(rf"^{re.escape(b)}\s+hot\s+1\s+3000\s+2\.9 KiB\s+<\$0\.01$", table, re.M), table
    assert re.search(rf"^{re.escape(b)}\s+warm\s+1\s+5000\s+4\.9 KiB\s+<\$0\.01$", table, re.M), table
    assert re.search(r"^hot\s+local\s+\d+\s+\d+\s+\S+ \S+\s+20\.0 GiB\s+\$0\.8000\s+<?\$\d+\.\d\d$",
                     table, re.M), table
    assert "TOTAL COST/MONTH" in table

    assert metric(srv, "strata_usage_bytes", bucket=b, tier="hot") == 3000
    assert metric(srv, "strata_usage_objects", bucket=b, tier="warm") == 1
    assert metric(srv, "strata_tier_capacity_bytes", tier="hot") == 20 << 30
    assert metric(srv, "strata_tier_bytes", tier="warm") == tiers["warm"]["bytes"]


def test_usage_needs_an_admin(srv):
    cfg = srv.config_path.read_text().replace("admin = true", "admin = false")
    other = srv.config_path.with_name("nonadmin.toml")
    other.write_text(cfg)
    res = run_admin(other, "usage", timeout=60)
    assert res.returncode != 0


def test_counters_survive_a_kill_during_writes(srv):
    s3 = make_client(srv)
    b = unique_bucket("usage-kill")
    s3.create_bucket(Bucket=b)
    stop = threading.Event()

    def writer(n):
        client = make_client(srv)
        i = 0
        while not stop.is_set():
            try:
                client.put_object(Bucket=b, Key=f"w{n}/{i % 40}", Body=b"q" * (100 + i * 7 % 5000))
            except Exception:
                return
            i += 1

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    time.sleep(2.0)
    srv.kill()
    stop.set()
    for t in threads:
        t.join(timeout=30)
    srv.start()
    s3 = make_client(srv)
    total, count = 0, 0
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=b):
        for obj in page.get("Contents", []):
            total += obj["Size"]
            count += 1
    assert count > 0
    assert bucket_rows(srv, b) == {"hot": (count, total)}


def test_written_back_and_evicted_objects_count_on_their_tiers(cold_strata):
    srv = cold_strata(delay="0s")
    s3 = make_client(srv)
    b = unique_bucket("usage-cold")
    s3.create_bucket(Bucket=b)
    s3.put_object(Bucket=b, Key="k", Body=b"c" * 4096)
    wait_until(lambda: bucket_rows(srv, b) == {"hot": (1, 4096), "cold": (1, 4096)},
               what=lambda: f"the write-back to count on cold: {bucket_rows(srv, b)}", srv=srv)
    evicted = admin(srv, "evict", b, "k")
    assert '"evicted":true' in evicted, evicted
    assert bucket_rows(srv, b) == {"cold": (1, 4096)}
    tiers = {t["tier"]: t for t in usage(srv)["tiers"]}
    assert tiers["cold"]["kind"] == "s3"
    # A GET reads it through and it is cached again.
    assert s3.get_object(Bucket=b, Key="k")["Body"].read() == b"c" * 4096
    wait_until(lambda: bucket_rows(srv, b) == {"hot": (1, 4096), "cold": (1, 4096)},
               what=lambda: f"the restored copy to count: {bucket_rows(srv, b)}", srv=srv)
