"""/metrics: Prometheus text exposition (format 0.0.4) for unsigned GET /metrics and
GET /_strata/metrics; a signed request to /metrics stays S3 (the bucket "metrics");
`[server] metrics = false` turns both paths back into plain S3 paths.

Scrapes use plain urllib, as Prometheus would: no signature. The exposition is parsed
strictly: every line is a # HELP / # TYPE comment or `name{labels} value`."""
import http.client
import os
import re
import time
import urllib.error
import urllib.request

import pytest

from conftest import empty_and_delete, make_client, raw_exchange, xml_code
from test_integrity import data_files, flip_byte, read_or_none

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MiB = 1 << 20

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
SAMPLE_RE = re.compile(rf"^({NAME})(?:\{{(.*)\}})? (\S+)$")
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"')
VALUE_RE = re.compile(r"^(?:[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)"
                      r"|[+-]Inf|NaN)$")
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


def _unescape(value):
    return re.sub(r"\\(.)", lambda m: {"n": "\n"}.get(m.group(1), m.group(1)), value)


def _labels(text, line):
    labels, pos = {}, 0
    while pos < len(text):
        m = LABEL_RE.match(text, pos)
        assert m, f"bad label set at {text[pos:]!r} in {line!r}"
        assert m.group(1) not in labels, f"label {m.group(1)} twice in {line!r}"
        labels[m.group(1)] = _unescape(m.group(2))
        pos = m.end()
        if pos < len(text):
            assert text[pos] == ",", f"expected ',' at {text[pos:]!r} in {line!r}"
            pos += 1
    return labels


class Exposition:
    """A strictly parsed scrape: samples {(name, sorted label items): value}, types."""

    def __init__(self, text):
        assert text.endswith("\n"), "the exposition must end with a newline"
        self.text = text
        self.samples = {}
        self.types = {}
        for line in text[:-1].split("\n"):
            if line.startswith("# HELP "):
                name, _, helptext = line[7:].partition(" ")
                assert re.fullmatch(NAME, name) and helptext, line
                continue
            if line.startswith("# TYPE "):
                name, _, kind = line[7:].partition(" ")
                assert re.fullmatch(NAME, name), line
                assert kind in ("counter", "gauge", "histogram", "summary", "untyped"), line
                assert name not in self.types, f"TYPE of {name} twice"
                self.types[name] = kind
                continue
            m = SAMPLE_RE.match(line)
            assert m, f"not a comment or a sample: {line!r}"
            name, labels, value = m.group(1), _labels(m.group(2) or "", line), m.group(3)
            assert VALUE_RE.match(value), f"bad value in {line!r}"
            family = name
            for suffix in HISTOGRAM_SUFFIXES:
                base = name[:-len(suffix)]
                if name.endswith(suffix) and self.types.get(base) == "histogram":
                    family = base
            assert family in self.types, f"sample before its # TYPE: {line!r}"
            key = (name, tuple(sorted(labels.items())))
            assert key not in self.samples, f"duplicate sample {line!r}"
            self.samples[key] = float(value)

    def get(self, name, **labels):
        """The sample's value, 0 when absent (a series not seen yet)."""
        return self.samples.get((name, tuple(sorted(labels.items()))), 0.0)

    def series(self, name):
        return {k[1]: v for k, v in self.samples.items() if k[0] == name}


def scrape(srv, path="/metrics"):
    with urllib.request.urlopen(srv.endpoint + path, timeout=30) as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"] == CONTENT_TYPE
        return Exposition(resp.read().decode("utf-8"))


def scrape_until(srv, done, path="/metrics", timeout=15.0):
    """Scrapes until done(exposition) or the timeout; returns the last scrape. A request is
    counted once its response is written, which a fast client can overtake."""
    deadline = time.monotonic() + timeout
    while True:
        exp = scrape(srv, path)
        if done(exp) or time.monotonic() > deadline:
            return exp
        time.sleep(0.05)


def check_histograms(exp):
    """Every histogram series: cumulative buckets, +Inf == _count, a _sum."""
    for name, kind in exp.types.items():
        if kind != "histogram":
            continue
        series = {}
        for labels, value in exp.series(name + "_bucket").items():
            d = dict(labels)
            le = d.pop("le")
            series.setdefault(tuple(sorted(d.items())), []).append((float(le), value))
        assert series, f"histogram {name} has no buckets"
        for labels, buckets in series.items():
            buckets.sort()
            values = [v for _, v in buckets]
            assert values == sorted(values), (name, labels, buckets)
            assert buckets[-1][0] == float("inf"), (name, labels)
            count = exp.samples[(name + "_count", labels)]
            assert count == values[-1], (name, labels)
            assert exp.samples[(name + "_sum", labels)] >= 0


def test_counters_move_by_exactly_the_requests_made(server, s3, bucket):
    body = os.urandom(100_000)
    before = scrape(server)

    s3.put_object(Bucket=bucket, Key="a", Body=body)
    s3.put_object(Bucket=bucket, Key="b", Body=body)
    for _ in range(3):
        assert s3.get_object(Bucket=bucket, Key="a")["Body"].read() == body
    with pytest.raises(Exception):
        s3.get_object(Bucket=bucket, Key="missing")
    s3.head_object(Bucket=bucket, Key="b")

    expected = {("PutObject", "200"): 2, ("GetObject", "200"): 3, ("GetObject", "404"): 1,
                ("HeadObject", "200"): 1}

    def moved(exp, op, code):
        return (exp.get("strata_requests_total", op=op, code=code) -
                before.get("strata_requests_total", op=op, code=code))

    after = scrape_until(server, lambda exp: all(moved(exp, *k) >= n
                                                 for k, n in expected.items()))

    def delta(name, **labels):
        return after.get(name, **labels) - before.get(name, **labels)

    assert {k: moved(after, *k) for k in expected} == expected
    # The scrape before was counted after it was rendered.
    assert delta("strata_requests_total", op="GetMetrics", code="200") >= 1
    assert delta("strata_request_duration_seconds_count", op="GetObject") == 4
    assert delta("strata_request_duration_seconds_sum", op="GetObject") > 0
    assert delta("strata_bytes_sent_total") >= 3 * len(body)
    assert delta("strata_bytes_received_total") >= 2 * len(body)
    check_histograms(after)

    assert after.types["strata_requests_total"] == "counter"
    assert after.types["strata_connections_open"] == "gauge"
    # This scrape's own connection is open; none of boto3's pool is counted twice.
    assert 1 <= after.get("strata_connections_open") <= after.get("strata_connections_total")
    assert delta("strata_connections_total") >= 1
    assert after.get("strata_uptime_seconds") > before.get("strata_uptime_seconds") > 0
    assert after.get("process_resident_memory_bytes") > 1 << 20
    assert after.get("process_open_fds") > 0
    assert after.types["strata_checksum_mismatches_total"] == "counter"
    assert after.get("strata_index_cache_capacity_bytes") == 64 * MiB  # the default
    assert 0 <= after.get("strata_index_cache_bytes") <= 64 * MiB
    # Each GET read its bucket and version from the index; the rows, just written, were in
    # memory: inline, no hop to the blocking pool.
    assert after.types["strata_index_reads_total"] == "counter"
    assert delta("strata_index_reads_total", path="memory") >= 8
    build = after.series("strata_build_info")
    assert len(build) == 1 and list(build.values()) == [1.0], build
    assert dict(next(iter(build))).get("version"), build


def test_admin_prefix_path_and_malformed_requests(server):
    before = scrape(server, "/_strata/metrics")
    resp = raw_exchange(server, b"NOT AN HTTP REQUEST\r\n\r\n")
    assert resp is not None and resp.status == 400
    # An unknown method on a bucket is named by its method (an anonymous one: the bucket
    # does not exist, so the method's refusal is the answer).
    resp = raw_exchange(server, b"PROPFIND /some-bucket HTTP/1.1\r\nHost: x\r\n"
                                b"Connection: close\r\n\r\n")
    assert resp is not None and resp.status == 405, resp
    after = scrape_until(
        server, lambda exp: exp.get("strata_requests_total", op="OTHER", code="405") >
        before.get("strata_requests_total", op="OTHER", code="405") and
        exp.get("strata_requests_total", op="Malformed", code="400") >
        before.get("strata_requests_total", op="Malformed", code="400"), "/_strata/metrics")
    assert after.get("strata_requests_total", op="Malformed", code="400") - \
        before.get("strata_requests_total", op="Malformed", code="400") == 1
    assert after.get("strata_requests_total", op="OTHER", code="405") - \
        before.get("strata_requests_total", op="OTHER", code="405") == 1


def test_scrape_keeps_the_connection_alive(server):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        for _ in range(2):
            conn.request("GET", "/metrics")
            resp = conn.getresponse()
            assert resp.status == 200
            assert resp.getheader("Content-Type") == CONTENT_TYPE
            Exposition(resp.read().decode("utf-8"))
            assert resp.getheader("Connection", "").lower() != "close"
    finally:
        conn.close()


def test_signed_requests_to_metrics_are_s3_on_the_bucket_metrics(server, s3):
    try:
        s3.create_bucket(Bucket="metrics")
        s3.put_object(Bucket="metrics", Key="k", Body=b"v")
        listed = s3.list_objects(Bucket="metrics")
        assert [o["Key"] for o in listed.get("Contents", [])] == ["k"]
        listed = s3.list_objects_v2(Bucket="metrics")
        assert [o["Key"] for o in listed.get("Contents", [])] == ["k"]
        # A presigned URL is signed too: S3's listing, not the exposition.
        url = s3.generate_presigned_url("list_objects", Params={"Bucket": "metrics"},
                                        ExpiresIn=300)
        with urllib.request.urlopen(url, timeout=30) as resp:
            text = resp.read().decode()
        assert "<ListBucketResult" in text and "<Key>k</Key>" in text, text
        # Unsigned: still the exposition, bucket or not. A request is counted once its
        # response is written, which the client can overtake: poll.
        after = scrape_until(server, lambda e: e.get("strata_requests_total", op="ListObjects",
                                                     code="200") >= 2)
        assert after.get("strata_requests_total", op="ListObjects", code="200") >= 2
        assert after.get("strata_requests_total", op="ListObjectsV2", code="200") >= 1
    finally:
        empty_and_delete(s3, "metrics")


def test_metrics_false_leaves_the_paths_to_s3(strata_factory):
    srv = strata_factory(overrides={"server": {"metrics": False}})
    for path in ("/metrics", "/_strata/metrics"):
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(srv.endpoint + path, timeout=30)
        # An anonymous S3 request on a bucket that does not exist.
        assert info.value.code == 404, path
        assert info.value.headers["Content-Type"] == "application/xml", path
        assert xml_code(info.value.read()) == "NoSuchBucket", path
    s3 = make_client(srv)
    s3.create_bucket(Bucket="metrics")
    assert s3.list_objects_v2(Bucket="metrics")["KeyCount"] == 0
    s3.delete_bucket(Bucket="metrics")


def test_checksum_mismatches_are_counted(strata_factory):
    srv = strata_factory()
    s3 = make_client(srv, retries={"total_max_attempts": 1})
    s3.create_bucket(Bucket="integrity")
    body = os.urandom(2 * MiB + 1000)
    before_files = data_files(srv)
    s3.put_object(Bucket="integrity", Key="obj", Body=body)
    (path,) = data_files(srv) - before_files
    assert s3.get_object(Bucket="integrity", Key="obj")["Body"].read() == body
    before = scrape(srv)
    assert before.get("strata_checksum_mismatches_total") == 0

    flip_byte(path, MiB + 4321)  # in chunk 1
    assert read_or_none(s3, Bucket="integrity", Key="obj") is None

    def gets(exp):
        return sum(v for labels, v in exp.series("strata_requests_total").items()
                   if dict(labels)["op"] == "GetObject")

    after = scrape_until(srv, lambda exp: gets(exp) >= 2)
    assert after.get("strata_checksum_mismatches_total") >= 1
    # The damaged read was answered (200, then a cut body) or refused; either way counted.
    assert gets(after) == 2, after.series("strata_requests_total")
