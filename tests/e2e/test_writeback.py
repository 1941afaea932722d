"""Write-back to an upstream S3 store: strata with a tier of kind "s3" acknowledges writes
from its local hot tier and pushes them upstream in the background after
`[writeback] delay`.

The upstream is a real moto_server behind a proxy the test can cut (upstream.py), so the
tests can see what strata sent (request lines per path) and make the upstream vanish:
  - CreateBucket is mirrored upstream; PUT is acknowledged at once and pushed after the
    delay with identical bytes, Content-Type and x-amz-meta-*; overwrites inside the delay
    coalesce into one push; DELETE propagates; a delete inside the delay sends nothing;
    multipart uploads arrive byte-exact.
  - HEAD/GET carry `x-strata-writeback: pending|done` in upstream-bound buckets only.
  - The backlog is visible and drainable: GET /_strata/admin/writeback, POST
    /_strata/admin/flush?timeout=S, `strata-admin writeback|flush`, and /metrics gauges
    and counters.
  - Nothing acknowledged is lost: through an upstream outage (reads and writes go on;
    the backlog drains by itself afterwards), across SIGKILL, and when a push keeps being
    refused (4xx: listed as failing, still pending, still readable).
  - `[writeback] dirty_limit`: with the backlog at or above it, PUTs get 503 SlowDown
    (DELETEs still work) until the backlog drains.

Timing: every wait polls (upstream.wait_until) with a generous timeout; the only fixed
sleeps are short ones that let the delay elapse where a test needs it to have elapsed.
"""
import hashlib
import io
import json
import os
import random

import boto3.s3.transfer
import pytest

import s3sign
from conftest import ADMIN_AK, ADMIN_SK, admin, make_client, raises_s3, raw_exchange, run_admin
from test_metrics import scrape, scrape_until
from upstream import wait_until

pytestmark = pytest.mark.upstream

KiB, MiB = 1 << 10, 1 << 20
HEADER = "x-strata-writeback"
PUSH_TIMEOUT = 30.0    # delay + a few seconds, with room for a loaded two-core machine
DRAIN_TIMEOUT = 60.0   # after an outage: the worker's retry backoff decides


# ---------------------------------------------------------------------------------------
# Helpers


def no_retry_client(srv):
    return make_client(srv, retries={"total_max_attempts": 1, "mode": "standard"})


def wb_header(resp):
    """x-strata-writeback of a boto3 response, or None."""
    return resp["ResponseMetadata"]["HTTPHeaders"].get(HEADER)


def wb_state(s3, bucket, key):
    return wb_header(s3.head_object(Bucket=bucket, Key=key))


def admin_request(srv, method, path, query=(), timeout=30.0):
    signer = s3sign.SigV4(ADMIN_AK, ADMIN_SK, srv.region)
    resp = raw_exchange(srv, s3sign.signed_request_bytes(signer, method, srv.netloc, path,
                                                         list(query)), timeout=timeout)
    assert resp is not None, f"no answer to {method} {path}\n{srv.logs()[-4000:]}"
    return resp


def check_backlog_json(text):
    """Parses a backlog document and checks its shape; returns it."""
    doc = json.loads(text)
    assert isinstance(doc, dict), doc
    for name in ("objects", "bytes"):
        assert isinstance(doc.get(name), int) and doc[name] >= 0, doc
    assert isinstance(doc.get("oldest_age_seconds"), (int, float)), doc
    assert doc["oldest_age_seconds"] >= 0, doc
    assert isinstance(doc.get("failing"), list), doc
    for f in doc["failing"]:
        assert isinstance(f.get("bucket"), str) and isinstance(f.get("key"), str), doc
        assert isinstance(f.get("attempts"), int) and isinstance(f.get("error"), str), doc
    return doc


def backlog(srv):
    """GET /_strata/admin/writeback as a dict."""
    resp = admin_request(srv, "GET", "/_strata/admin/writeback")
    assert resp.status == 200, resp
    return check_backlog_json(resp.body)


def flush(srv, timeout):
    """POST /_strata/admin/flush?timeout=S: (status, backlog dict)."""
    resp = admin_request(srv, "POST", "/_strata/admin/flush", [("timeout", str(timeout))],
                         timeout=timeout + 30)
    assert resp.status in (200, 503), resp
    return resp.status, check_backlog_json(resp.body)


def wait_upstream(upstream, bucket, key, body, srv, timeout=PUSH_TIMEOUT):
    """Waits until the upstream holds exactly `body` at bucket/key; returns get_object's
    response (its body already read)."""
    def arrived():
        got = upstream.get(bucket, key)
        return got if got is not None and got[0] == body else None

    return wait_until(arrived, timeout, f"{bucket}/{key} ({len(body)} bytes) upstream",
                      srv=srv)[1]


def wait_upstream_gone(upstream, bucket, key, srv, timeout=PUSH_TIMEOUT):
    wait_until(lambda: upstream.get(bucket, key) is None, timeout,
               f"{bucket}/{key} to be gone upstream", srv=srv)


def wait_backlog_empty(srv, timeout=PUSH_TIMEOUT):
    def empty():
        doc = backlog(srv)
        return doc if (doc["objects"], doc["bytes"]) == (0, 0) else None

    return wait_until(empty, timeout, lambda: f"an empty backlog; now {backlog(srv)}", srv=srv)


# ---------------------------------------------------------------------------------------
# The basics: mirrored buckets, pushed objects, the header


def test_create_bucket_is_created_upstream(upstream, cold_strata):
    srv = cold_strata()
    s3 = make_client(srv)
    s3.create_bucket(Bucket="mirrored")
    upstream.client.head_bucket(Bucket="mirrored")
    assert "mirrored" in [b["Name"] for b in s3.list_buckets()["Buckets"]]


def test_put_is_acknowledged_at_once_then_pushed(upstream, cold_strata):
    srv = cold_strata(delay="3s")   # long enough to see "pending" before the push
    s3 = make_client(srv)
    s3.create_bucket(Bucket="wback")
    body = os.urandom(200 * KiB + 17)
    meta = {"origin": "e2e", "shard": "0007"}
    put = s3.put_object(Bucket="wback", Key="data/obj.bin", Body=body,
                        ContentType="application/x-e2e", Metadata=meta)
    assert put["ETag"] == f'"{hashlib.md5(body).hexdigest()}"'

    # Acknowledged from the local tier: readable through strata, pending, not upstream.
    head = s3.head_object(Bucket="wback", Key="data/obj.bin")
    assert wb_header(head) == "pending", head["ResponseMetadata"]["HTTPHeaders"]
    got = s3.get_object(Bucket="wback", Key="data/obj.bin")
    assert got["Body"].read() == body
    assert wb_header(got) == "pending"
    assert upstream.get("wback", "data/obj.bin") is None, "pushed before the delay"

    up = wait_upstream(upstream, "wback", "data/obj.bin", body, srv)
    assert up["ContentType"] == "application/x-e2e"
    assert up["Metadata"] == meta
    assert up["ContentLength"] == len(body)
    wait_until(lambda: wb_state(s3, "wback", "data/obj.bin") == "done", PUSH_TIMEOUT,
               "HEAD to say done", srv=srv)
    got = s3.get_object(Bucket="wback", Key="data/obj.bin")
    assert got["Body"].read() == body and wb_header(got) == "done"


def test_no_writeback_header_without_upstream(strata_factory):
    srv = strata_factory()   # the default configuration: local tiers only
    s3 = make_client(srv)
    s3.create_bucket(Bucket="local")
    s3.put_object(Bucket="local", Key="k", Body=b"local only")
    assert wb_header(s3.head_object(Bucket="local", Key="k")) is None
    got = s3.get_object(Bucket="local", Key="k")
    assert got["Body"].read() == b"local only" and wb_header(got) is None


def test_overwrites_within_the_delay_coalesce(upstream, cold_strata):
    srv = cold_strata(delay="3s")
    s3 = make_client(srv)
    s3.create_bucket(Bucket="coalesce")
    bodies = [os.urandom(10 * KiB + i) for i in range(3)]
    for b in bodies:
        s3.put_object(Bucket="coalesce", Key="key", Body=b)
    assert s3.get_object(Bucket="coalesce", Key="key")["Body"].read() == bodies[-1]

    wait_upstream(upstream, "coalesce", "key", bodies[-1], srv)
    wait_until(lambda: wb_state(s3, "coalesce", "key") == "done", PUSH_TIMEOUT,
               "HEAD to say done", srv=srv)
    wait_backlog_empty(srv)
    puts = upstream.proxy.count("PUT", "/coalesce/key", exact=True)
    assert puts == 1, f"{puts} PUTs of the key upstream: {upstream.proxy.requests()}"


def test_delete_propagates(upstream, cold_strata):
    srv = cold_strata()
    s3 = make_client(srv)
    s3.create_bucket(Bucket="del")
    s3.put_object(Bucket="del", Key="doomed", Body=b"short-lived")
    s3.put_object(Bucket="del", Key="kept", Body=b"stays")
    wait_upstream(upstream, "del", "doomed", b"short-lived", srv)
    wait_upstream(upstream, "del", "kept", b"stays", srv)

    s3.delete_object(Bucket="del", Key="doomed")
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket="del", Key="doomed")
    wait_upstream_gone(upstream, "del", "doomed", srv)
    wait_backlog_empty(srv)
    assert upstream.body("del", "kept") == b"stays"


def test_delete_before_the_push_sends_nothing(upstream, cold_strata):
    srv = cold_strata(delay="3s")
    s3 = make_client(srv)
    s3.create_bucket(Bucket="never")
    s3.put_object(Bucket="never", Key="ephemeral", Body=os.urandom(50 * KiB))
    s3.delete_object(Bucket="never", Key="ephemeral")
    wait_backlog_empty(srv)
    assert upstream.get("never", "ephemeral") is None
    assert upstream.keys("never") == []
    # The write was superseded inside the delay: its bytes never went upstream.
    assert upstream.proxy.count("PUT", "/never/ephemeral", exact=True) == 0, \
        upstream.proxy.requests()


def test_multipart_upload_is_pushed_byte_exact(upstream, cold_strata):
    srv = cold_strata()
    s3 = make_client(srv)
    s3.create_bucket(Bucket="mpu")
    body = os.urandom(3 * 5 * MiB + 1 * MiB)
    cfg = boto3.s3.transfer.TransferConfig(multipart_threshold=5 * MiB,
                                           multipart_chunksize=5 * MiB, max_concurrency=4)
    s3.upload_fileobj(io.BytesIO(body), "mpu", "ckpt/model.pt", Config=cfg,
                      ExtraArgs={"ContentType": "application/octet-stream",
                                 "Metadata": {"step": "1000"}})
    head = s3.head_object(Bucket="mpu", Key="ckpt/model.pt")
    assert head["ETag"].endswith('-4"'), head["ETag"]   # it was a 4-part upload

    up = wait_upstream(upstream, "mpu", "ckpt/model.pt", body, srv, timeout=60)
    assert up["ContentLength"] == len(body)
    assert up["ContentType"] == "application/octet-stream"
    assert up["Metadata"] == {"step": "1000"}
    wait_until(lambda: wb_state(s3, "mpu", "ckpt/model.pt") == "done", PUSH_TIMEOUT,
               "HEAD to say done", srv=srv)


@pytest.mark.big
def test_large_object_is_pushed_as_an_upstream_multipart_upload(upstream, cold_strata):
    """Past 64 MiB the worker uploads in 16 MiB parts (storage/upstream/s3_client.h): the
    upstream holds the object byte-exact, with its metadata, as a 6-part upload; the
    worker streams it from the hot tier, it never holds it whole."""
    srv = cold_strata(delay="60s")
    s3 = make_client(srv)
    s3.create_bucket(Bucket="huge")
    body = os.urandom(80 * MiB + 12345)
    s3.put_object(Bucket="huge", Key="shard.tar", Body=body, ContentType="application/x-tar",
                  Metadata={"rows": "123456"})
    upstream.proxy.reset_counts()
    status, doc = flush(srv, 120)
    assert status == 200, doc
    up = upstream.client.get_object(Bucket="huge", Key="shard.tar")
    assert hashlib.sha256(up["Body"].read()).digest() == hashlib.sha256(body).digest()
    assert up["ETag"].endswith('-6"'), up["ETag"]   # 5 parts of 16 MiB and the rest
    assert up["ContentType"] == "application/x-tar" and up["Metadata"] == {"rows": "123456"}
    assert upstream.proxy.count("PUT", "/huge/shard.tar") == 6   # the parts
    assert wb_state(s3, "huge", "shard.tar") == "done"


# ---------------------------------------------------------------------------------------
# Seeing and draining the backlog


def test_admin_writeback_and_flush(upstream, cold_strata):
    srv = cold_strata(delay="60s")
    s3 = make_client(srv)
    s3.create_bucket(Bucket="adm")
    bodies = {"one": os.urandom(1000), "two": os.urandom(70 * KiB + 3)}
    for k, b in bodies.items():
        s3.put_object(Bucket="adm", Key=k, Body=b)

    doc = backlog(srv)
    assert doc["objects"] == 2, doc
    assert doc["bytes"] == sum(map(len, bodies.values())), doc
    assert doc["failing"] == [], doc
    printed = check_backlog_json(admin(srv, "writeback"))
    assert (printed["objects"], printed["bytes"]) == (doc["objects"], doc["bytes"]), printed

    admin(srv, "flush", "--timeout", "60")
    for k, b in bodies.items():   # flush returned: everything is upstream already
        assert upstream.body("adm", k) == b, k
        assert wb_state(s3, "adm", k) == "done"
    doc = backlog(srv)
    assert (doc["objects"], doc["bytes"]) == (0, 0), doc
    printed = check_backlog_json(admin(srv, "writeback"))
    assert printed["objects"] == 0, printed

    # Flushing an empty backlog answers at once.
    status, doc = flush(srv, 5)
    assert status == 200 and doc["objects"] == 0, doc


def test_flush_times_out_while_the_upstream_is_down(upstream, cold_strata):
    srv = cold_strata(delay="60s")
    s3 = make_client(srv)
    s3.create_bucket(Bucket="stuck")
    upstream.proxy.stop()
    s3.put_object(Bucket="stuck", Key="k", Body=b"waiting for the upstream")

    status, doc = flush(srv, 2)
    assert status == 503, doc
    assert doc["objects"] == 1 and doc["bytes"] == len(b"waiting for the upstream"), doc
    res = run_admin(srv.config_path, "flush", "--timeout", "2")
    assert res.returncode != 0, res
    assert "Traceback" not in res.stderr and "terminate called" not in res.stderr

    upstream.proxy.start()
    admin(srv, "flush", "--timeout", "90")
    assert upstream.body("stuck", "k") == b"waiting for the upstream"


def test_metrics_follow_the_backlog(upstream, cold_strata):
    srv = cold_strata(delay="60s")
    s3 = make_client(srv)
    s3.create_bucket(Bucket="metered")
    before = scrape(srv)
    for name, kind in (("strata_writeback_backlog_objects", "gauge"),
                       ("strata_writeback_backlog_bytes", "gauge"),
                       ("strata_writeback_oldest_age_seconds", "gauge"),
                       ("strata_writeback_pushes_total", "counter"),
                       ("strata_writeback_failures_total", "counter")):
        assert before.types.get(name) == kind, (name, before.types.get(name))
    assert before.get("strata_writeback_backlog_objects") == 0
    assert before.get("strata_writeback_backlog_bytes") == 0
    pushes0 = before.get("strata_writeback_pushes_total")
    failures0 = before.get("strata_writeback_failures_total")

    body = os.urandom(5000)
    s3.put_object(Bucket="metered", Key="m", Body=body)
    exp = scrape_until(srv, lambda e: e.get("strata_writeback_backlog_objects") == 1)
    assert exp.get("strata_writeback_backlog_objects") == 1
    assert exp.get("strata_writeback_backlog_bytes") == len(body)
    exp = scrape_until(srv, lambda e: e.get("strata_writeback_oldest_age_seconds") >= 1,
                       timeout=15)
    assert exp.get("strata_writeback_oldest_age_seconds") >= 1
    assert exp.get("strata_writeback_pushes_total") == pushes0   # the delay is 60s

    status, doc = flush(srv, 60)
    assert status == 200, doc
    exp = scrape_until(srv, lambda e: e.get("strata_writeback_pushes_total") > pushes0)
    assert exp.get("strata_writeback_pushes_total") == pushes0 + 1
    assert exp.get("strata_writeback_backlog_objects") == 0
    assert exp.get("strata_writeback_backlog_bytes") == 0
    assert exp.get("strata_writeback_failures_total") == failures0

    # A delete is a push too.
    s3.delete_object(Bucket="metered", Key="m")
    status, doc = flush(srv, 60)
    assert status == 200, doc
    exp = scrape_until(srv, lambda e: e.get("strata_writeback_pushes_total") > pushes0 + 1)
    assert exp.get("strata_writeback_pushes_total") == pushes0 + 2
    assert upstream.get("metered", "m") is None


# ---------------------------------------------------------------------------------------
# Nothing acknowledged is lost


def test_upstream_outage_then_recovery(upstream, cold_strata):
    srv = cold_strata(delay="1s")
    s3 = make_client(srv)
    s3.create_bucket(Bucket="outage")
    upstream.proxy.stop()

    rng = random.Random(7)
    bodies = {f"o/{i}": rng.randbytes(rng.choice([1, 999, 64 * KiB, 300 * KiB + i]))
              for i in range(6)}
    for k, b in bodies.items():
        s3.put_object(Bucket="outage", Key=k, Body=b)
    for k, b in bodies.items():
        got = s3.get_object(Bucket="outage", Key=k)
        assert got["Body"].read() == b, k
        assert wb_header(got) == "pending", k
        assert wb_state(s3, "outage", k) == "pending", k

    # Let the worker try (and fail) past the delay: the backlog stays whole.
    wait_until(lambda: scrape(srv).get("strata_writeback_failures_total") >= 1, 30,
               "a failed push attempt while the upstream is down", srv=srv)
    doc = backlog(srv)
    assert doc["objects"] == len(bodies), doc
    assert doc["bytes"] == sum(map(len, bodies.values())), doc
    for k, b in bodies.items():   # still served locally
        assert s3.get_object(Bucket="outage", Key=k)["Body"].read() == b, k
        assert wb_state(s3, "outage", k) == "pending", k

    upstream.proxy.start()   # no flush: the worker must come back on its own
    for k, b in bodies.items():
        wait_upstream(upstream, "outage", k, b, srv, timeout=DRAIN_TIMEOUT)
    wait_backlog_empty(srv, timeout=DRAIN_TIMEOUT)
    for k in bodies:
        assert wb_state(s3, "outage", k) == "done", k


def test_dirty_limit_answers_slowdown(upstream, cold_strata):
    srv = cold_strata(delay="1s", dirty_limit="1MiB")
    s3 = no_retry_client(srv)
    s3.create_bucket(Bucket="dirty")
    s3.put_object(Bucket="dirty", Key="old", Body=b"pushed before the outage")
    wait_upstream(upstream, "dirty", "old", b"pushed before the outage", srv)
    wait_backlog_empty(srv)

    upstream.proxy.stop()
    a, b, c = (os.urandom(600 * KiB) for _ in range(3))
    s3.put_object(Bucket="dirty", Key="a", Body=a)   # backlog 0 before it
    s3.put_object(Bucket="dirty", Key="b", Body=b)   # backlog 600 KiB < 1 MiB before it
    with raises_s3("SlowDown", 503):                 # backlog 1200 KiB >= 1 MiB
        s3.put_object(Bucket="dirty", Key="c", Body=c)
    # Not here, and the upstream that might hold it is unreachable: 503, not a guess.
    with raises_s3("SlowDown", 503):
        s3.get_object(Bucket="dirty", Key="c")
    # Deletes still work over the limit, and free no bytes of the backlog here.
    s3.delete_object(Bucket="dirty", Key="old")
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket="dirty", Key="old")
    with raises_s3("SlowDown", 503):
        s3.put_object(Bucket="dirty", Key="c", Body=c)
    assert s3.get_object(Bucket="dirty", Key="a")["Body"].read() == a
    assert s3.get_object(Bucket="dirty", Key="b")["Body"].read() == b

    upstream.proxy.start()
    wait_backlog_empty(srv, timeout=DRAIN_TIMEOUT)
    assert upstream.body("dirty", "a") == a
    assert upstream.body("dirty", "b") == b
    assert upstream.get("dirty", "old") is None
    s3.put_object(Bucket="dirty", Key="c", Body=c)
    wait_upstream(upstream, "dirty", "c", c, srv)


def test_large_backlog_drains_without_waiting_for_ticks(upstream, cold_strata):
    """A finished push frees its slot for the next item at once: 300 small objects drain
    in a few seconds, not one batch of pushes per worker tick (which took minutes)."""
    srv = cold_strata(delay="60s")
    s3 = make_client(srv)
    s3.create_bucket(Bucket="many")
    bodies = {f"shard-{i:04d}": os.urandom(100 + i) for i in range(300)}
    for k, b in bodies.items():
        s3.put_object(Bucket="many", Key=k, Body=b)
    assert backlog(srv)["objects"] == len(bodies)
    status, doc = flush(srv, 45)
    assert status == 200, doc
    assert sorted(upstream.keys("many")) == sorted(bodies)
    for k in ("shard-0000", "shard-0150", "shard-0299"):
        assert upstream.body("many", k) == bodies[k]


def test_backlog_survives_sigkill(upstream, cold_strata):
    seed = int(os.environ.get("STRATA_WRITEBACK_SEED", random.randrange(1 << 30)))
    print(f"write-back crash seed {seed} (rerun with STRATA_WRITEBACK_SEED={seed})")
    rng = random.Random(seed)
    srv = cold_strata(delay="1s")
    s3 = make_client(srv)
    s3.create_bucket(Bucket="crash")
    upstream.proxy.stop()

    bodies = {f"small/{i:02d}": rng.randbytes(rng.randint(1, 300 * KiB)) for i in range(20)}
    bodies["big"] = rng.randbytes(8 * MiB)
    for k, b in bodies.items():
        put = s3.put_object(Bucket="crash", Key=k, Body=b)
        assert put["ETag"] == f'"{hashlib.md5(b).hexdigest()}"', k   # acknowledged
    srv.kill()

    assert upstream.keys("crash") == []   # the upstream was down the whole time

    upstream.proxy.start()
    srv.start()
    # The worker may already be pushing (every item is past its delay): no exact count.
    doc = backlog(srv)
    assert doc["objects"] <= len(bodies), doc
    status, doc = flush(srv, 120)
    assert status == 200 and doc["objects"] == 0, doc
    for k, b in bodies.items():
        assert upstream.body("crash", k) == b, f"{k} upstream differs from what was acked"
        assert s3.get_object(Bucket="crash", Key=k)["Body"].read() == b, k
    assert sorted(upstream.keys("crash")) == sorted(bodies)


def test_refused_push_is_reported_not_dropped(upstream, cold_strata):
    srv = cold_strata(delay="1s")
    s3 = make_client(srv)
    s3.create_bucket(Bucket="orphan")
    upstream.client.delete_bucket(Bucket="orphan")   # every push now gets 404 NoSuchBucket
    body = os.urandom(20 * KiB)
    s3.put_object(Bucket="orphan", Key="k", Body=body)

    def failing_entry():
        for f in backlog(srv)["failing"]:
            if (f["bucket"], f["key"]) == ("orphan", "k") and f["attempts"] >= 1 and f["error"]:
                return f
        return None

    entry = wait_until(failing_entry, 20, lambda: f"a failing entry; backlog {backlog(srv)}",
                       srv=srv)
    assert entry["error"].strip(), entry
    doc = backlog(srv)
    assert doc["objects"] == 1 and doc["bytes"] == len(body), doc
    assert scrape(srv).get("strata_writeback_failures_total") > 0
    assert wb_state(s3, "orphan", "k") == "pending"
    got = s3.get_object(Bucket="orphan", Key="k")
    assert got["Body"].read() == body and wb_header(got) == "pending"
