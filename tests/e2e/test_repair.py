"""Repair, not only detection: a damaged local copy of a version the upstream has (clean,
written back) is served from the upstream's copy, verified against the CRC64NVME
recorded when the PUT arrived, and replaces the damaged copy; a damaged dirty copy (the
only one) stays an error. The scrubber finds and repairs damage without any GET. The
write-back push carries the recorded CRC64NVME, so an upstream that checks it (S3, or a
second strata here) refuses bytes damaged on the way.

Damage is made by flipping bits in the data files of the hot tier: in the object's bytes,
in a chunk's CRC in the trailer, in the trailer's own CRC and in the footer's fields (what
the reader knows of the file). Every GET must answer the object's exact bytes (repaired)
or fail; never anything else.
"""
import json
import os
import socket
import threading

import pytest

from conftest import admin, make_client, metric, run_admin
from test_integrity import CHUNK, FOOTER, data_files, flip_byte, read_or_none
from test_upstream_restart import front_config
from test_writeback import flush, wb_state
from upstream import cold_config, wait_until

pytestmark = pytest.mark.upstream

KiB = 1 << 10


def put_file(srv, s3, bucket, key, body):
    """PUTs `body` and returns the path of the data file it made."""
    before = data_files(srv)
    s3.put_object(Bucket=bucket, Key=key, Body=body)
    (path,) = data_files(srv) - before
    return path


def chunks_of(size):
    return (size + CHUNK - 1) // CHUNK


def flushed(srv, s3, bucket, keys):
    status, doc = flush(srv, 60)
    assert status == 200, doc
    for key in keys:
        assert wb_state(s3, bucket, key) == "done"


def counter(srv, name, **labels):
    return metric(srv, name, **labels) or 0.0


# Where to flip a bit, as (name, offset in the data file given the object's size). All of
# them must be found; each names a different check of the reader.
DAMAGE = [
    ("first chunk (before the response header)", lambda n: 100),
    ("a chunk mid-stream (after the header went out)", lambda n: 9 * CHUNK + 5),
    ("the last, short chunk", lambda n: n - 3),
    ("a chunk CRC in the trailer", lambda n: n + 8 * 4 + 2),
    # The footer of a file the tier's open-file cache holds (every file here was read
    # before the flip): the reader compares the footer it reads again with the chunk CRCs
    # against the cached one, and checks the trailer CRC over the disk's bytes.
    ("the footer's trailer CRC", lambda n: n + 8 * chunks_of(n) + 32 + 3),
    ("the footer's magic", lambda n: n + 8 * chunks_of(n)),
    ("the footer's data length", lambda n: n + 8 * chunks_of(n) + 16),
    ("the footer's chunk count", lambda n: n + 8 * chunks_of(n) + 24),
]


@pytest.mark.boto3
def test_every_damaged_clean_copy_is_repaired_from_the_upstream(upstream, cold_strata):
    srv = cold_strata()
    s3 = make_client(srv, retries={"total_max_attempts": 1})
    s3.create_bucket(Bucket="heal")
    size = 12 * CHUNK + 777   # 13 chunks: the first 256 KiB block goes with the header
    bodies, paths = {}, {}
    for i, _ in enumerate(DAMAGE):
        key = f"obj{i}"
        bodies[key] = os.urandom(size)
        paths[key] = put_file(srv, s3, "heal", key, bodies[key])
    flushed(srv, s3, "heal", bodies)
    for key, body in bodies.items():
        assert s3.get_object(Bucket="heal", Key=key)["Body"].read() == body
    upstream.proxy.reset_counts()

    for i, (where, offset) in enumerate(DAMAGE):
        flip_byte(paths[f"obj{i}"], offset(size))

    mismatches = counter(srv, "strata_checksum_mismatches_total")
    for i, (where, _) in enumerate(DAMAGE):
        key = f"obj{i}"
        got = read_or_none(s3, Bucket="heal", Key=key)
        assert got is not None, f"damage in {where}: the GET failed\n{srv.logs()[-3000:]}"
        assert got == bodies[key], f"damage in {where}: wrong bytes served"
        assert counter(srv, "strata_integrity_repairs_total") == i + 1, where
        # The damaged file is gone, a new one holds the version now.
        assert not os.path.exists(paths[key]), where
        fetched = upstream.proxy.count("GET", f"/heal/{key}", exact=True)
        assert fetched == 1, (where, upstream.proxy.requests())
        # The next GET is served by the repaired local copy.
        assert s3.get_object(Bucket="heal", Key=key)["Body"].read() == bodies[key]
        assert upstream.proxy.count("GET", f"/heal/{key}", exact=True) == 1, where
    assert counter(srv, "strata_checksum_mismatches_total") >= mismatches + len(DAMAGE) - 2
    assert counter(srv, "strata_integrity_unrepairable_total") == 0
    srv.stop()
    logs = srv.logs()
    assert logs.count("storage: repaired heal/obj") == len(DAMAGE), logs[-4000:]


@pytest.mark.boto3
def test_ranges_of_a_damaged_clean_copy_read_right(upstream, cold_strata):
    srv = cold_strata()
    s3 = make_client(srv, retries={"total_max_attempts": 1})
    s3.create_bucket(Bucket="ranges")
    body = os.urandom(5 * CHUNK + 10)
    path = put_file(srv, s3, "ranges", "r", body)
    flushed(srv, s3, "ranges", ["r"])
    flip_byte(path, 2 * CHUNK + 50)
    # A range inside the damaged chunk, then one across it: both right, one repair.
    for first, last in ((2 * CHUNK + 10, 2 * CHUNK + 99), (CHUNK - 5, 3 * CHUNK + 5)):
        got = s3.get_object(Bucket="ranges", Key="r", Range=f"bytes={first}-{last}")
        assert got["Body"].read() == body[first:last + 1], (first, last)
    assert counter(srv, "strata_integrity_repairs_total") == 1
    assert s3.get_object(Bucket="ranges", Key="r")["Body"].read() == body


@pytest.mark.boto3
def test_a_damaged_dirty_copy_stays_an_error(upstream, cold_strata):
    srv = cold_strata(delay="1h")   # nothing is written back during the test
    s3 = make_client(srv, retries={"total_max_attempts": 1})
    s3.create_bucket(Bucket="dirty")
    body = os.urandom(3000)
    path = put_file(srv, s3, "dirty", "only", body)
    assert wb_state(s3, "dirty", "only") == "pending"
    flip_byte(path, 1000)
    for _ in range(2):
        assert read_or_none(s3, Bucket="dirty", Key="only") is None
    assert counter(srv, "strata_integrity_unrepairable_total") == 2
    assert counter(srv, "strata_integrity_repairs_total") == 0
    assert upstream.proxy.count("GET", "/dirty/only", exact=True) == 0
    srv.stop()
    assert "UNREPAIRABLE: dirty/only" in srv.logs()


@pytest.mark.boto3
def test_without_an_upstream_damage_is_unrepairable(strata_factory):
    srv = strata_factory()
    s3 = make_client(srv, retries={"total_max_attempts": 1})
    s3.create_bucket(Bucket="alone")
    body = os.urandom(2 * CHUNK)
    path = put_file(srv, s3, "alone", "k", body)
    flip_byte(path, CHUNK + 1)
    assert read_or_none(s3, Bucket="alone", Key="k") is None
    assert counter(srv, "strata_integrity_unrepairable_total") == 1


def scrub(srv, *args):
    return json.loads(admin(srv, "scrub", *args))


@pytest.mark.boto3
def test_the_scrubber_repairs_without_any_get(upstream, strata_factory):
    overrides = cold_config(upstream, delay="1s")
    overrides["scrub"] = {"bytes_per_second": "256MiB", "interval": "24h"}
    srv = strata_factory(overrides)
    s3 = make_client(srv, retries={"total_max_attempts": 1})
    s3.create_bucket(Bucket="scrubbed")
    bodies, paths = {}, {}
    for i, size in enumerate((1, 5000, 3 * CHUNK + 9, 20 * CHUNK, 2 * CHUNK + 1, 777)):
        bodies[f"k{i}"] = os.urandom(size)
        paths[f"k{i}"] = put_file(srv, s3, "scrubbed", f"k{i}", bodies[f"k{i}"])
    flushed(srv, s3, "scrubbed", bodies)

    first = scrub(srv, "start", "--wait", "120")
    assert first["started"] and first["passes_completed"] == 1, first
    assert first["errors"] == 0 and first["objects"] == 6, first
    assert first["bytes"] == sum(map(len, bodies.values())), first

    flip_byte(paths["k1"], 4000)                                  # data
    n = len(bodies["k2"])
    flip_byte(paths["k2"], n + 8)                                 # a chunk CRC
    flip_byte(paths["k3"], 17 * CHUNK + 3)                        # data, late chunk
    # Footers of files the open-file cache holds (the first pass read them all): seen only
    # because the scrubber reads every trailer from the disk.
    n = len(bodies["k4"])
    flip_byte(paths["k4"], n + 8 * chunks_of(n) + 32)             # the trailer CRC
    n = len(bodies["k5"])
    flip_byte(paths["k5"], n + 8 * chunks_of(n) + 16)             # the data length
    upstream.proxy.reset_counts()
    second = scrub(srv, "start", "--wait", "120")
    assert second["passes_completed"] == 2, second
    assert second["errors"] == 5 and second["repaired"] == 5, second
    assert second["unrepairable"] == 0 and second["repair_failed"] == 0, second
    assert counter(srv, "strata_scrub_errors_total", outcome="repaired") == 5
    assert counter(srv, "strata_integrity_repairs_total") == 5
    assert counter(srv, "strata_scrub_passes_total") == 2
    assert counter(srv, "strata_scrub_bytes_total") > 0
    for key in ("k1", "k2", "k3", "k4", "k5"):
        assert not os.path.exists(paths[key]), key
    # Every copy reads right and locally: no GET reached the upstream after the repairs.
    fetched = upstream.proxy.count("GET", "/scrubbed/")
    for key, body in bodies.items():
        assert s3.get_object(Bucket="scrubbed", Key=key)["Body"].read() == body, key
    assert upstream.proxy.count("GET", "/scrubbed/") == fetched == 5
    assert scrub(srv, "status")["running"] is False


@pytest.mark.boto3
def test_the_scrubber_reports_a_damaged_dirty_copy(upstream, strata_factory):
    overrides = cold_config(upstream, delay="1h")
    overrides["scrub"] = {"bytes_per_second": 0}
    srv = strata_factory(overrides)
    s3 = make_client(srv)
    s3.create_bucket(Bucket="dirtyscrub")
    body = os.urandom(CHUNK + 5)
    path = put_file(srv, s3, "dirtyscrub", "d", body)
    flip_byte(path, CHUNK + 1)
    doc = scrub(srv, "start", "--wait", "120")
    assert doc["errors"] == 1 and doc["unrepairable"] == 1 and doc["repaired"] == 0, doc
    assert counter(srv, "strata_integrity_unrepairable_total") == 1
    assert os.path.exists(path)   # the only copy is kept for whoever investigates


class CorruptingProxy:
    """A TCP proxy that flips one byte of the body of every PUT of `path` it relays
    (at `body_offset` from the end of the request head): damage on the way upstream."""

    def __init__(self, target_port, path, body_offset=100):
        self.target = ("127.0.0.1", target_port)
        self.marker = f"PUT {path} HTTP/1.1".encode()
        self.body_offset = body_offset
        self.flipped = 0
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.region = "us-east-1"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            threading.Thread(target=self._up, args=(client, server), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client), daemon=True).start()

    def _pump(self, src, dst):
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _up(self, src, dst):
        """strata -> upstream, flipping a byte of the marked request's body."""
        seen = b""      # bytes of the current marked request until its body byte is hit
        armed = None    # bytes left before the byte to flip, once the head has ended
        try:
            while data := src.recv(65536):
                data = bytearray(data)
                if armed is None:
                    seen += bytes(data)
                    at = seen.find(self.marker)
                    end = seen.find(b"\r\n\r\n", at) if at >= 0 else -1
                    if end >= 0:
                        # Position of the target byte within this chunk of data.
                        target = end + 4 + self.body_offset - (len(seen) - len(data))
                        if target < len(data):
                            data[target] ^= 0x01
                            self.flipped += 1
                            seen = b""
                        else:
                            armed = target - len(data)
                    else:
                        seen = seen[-len(self.marker) - 4:] if at < 0 else seen
                elif armed < len(data):
                    data[armed] ^= 0x01
                    self.flipped += 1
                    armed, seen = None, b""
                else:
                    armed -= len(data)
                dst.sendall(bytes(data))
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self.listener.close()


@pytest.mark.boto3
def test_bytes_damaged_on_the_way_upstream_are_refused(strata_factory):
    """The push sends the CRC64NVME recorded at PUT time; an upstream that verifies it (a
    second strata here; moto does not check checksums) refuses the damaged body, the push
    fails and is retried, and nothing wrong is stored upstream."""
    up = strata_factory(name="upstream")
    proxy = CorruptingProxy(up.port, "/chain/victim")
    try:
        front = strata_factory(front_config(proxy), name="front")
        s3, s3_up = make_client(front), make_client(up)
        s3.create_bucket(Bucket="chain")
        good = os.urandom(50 * KiB)
        s3.put_object(Bucket="chain", Key="fine", Body=good)
        victim = os.urandom(50 * KiB)
        s3.put_object(Bucket="chain", Key="victim", Body=victim)
        status, doc = flush(front, 10)
        assert status == 503, doc   # the victim's push cannot succeed
        assert proxy.flipped >= 1
        failing = [f["key"] for f in doc["failing"]]
        assert failing == ["victim"], doc
        assert "BadDigest" in doc["failing"][0]["error"] or "checksum" in \
            doc["failing"][0]["error"].lower(), doc
        assert s3_up.get_object(Bucket="chain", Key="fine")["Body"].read() == good
        keys = [o["Key"] for o in s3_up.list_objects_v2(Bucket="chain").get("Contents", [])]
        assert keys == ["fine"], keys
        # strata still serves the acknowledged bytes, dirty.
        assert s3.get_object(Bucket="chain", Key="victim")["Body"].read() == victim
        assert wb_state(s3, "chain", "victim") == "pending"
    finally:
        proxy.close()
