"""Readers racing writers of the same keys: every GET answers 200 with one whole version
that some PUT wrote (S3's rule: the old object or the new one), never a 404, a mix of two
versions, or a short body. Found by the benchmark's mixed workload (tools/bench)."""
import hashlib
import threading
import time

import pytest

from conftest import make_client

pytestmark = pytest.mark.boto3

KEYS = 4
SECONDS = 6


def body_for(key, n):
    # Self-describing: a header naming the version, then bytes derived from it.
    head = f"{key}:{n}:".encode()
    return head + hashlib.sha256(head).digest() * (1 + n % 7) * 64


def test_gets_racing_overwrites_see_one_whole_version(server, bucket):
    keys = [f"race/{i}" for i in range(KEYS)]
    writer_client = make_client(server)
    for key in keys:
        writer_client.put_object(Bucket=bucket, Key=key, Body=body_for(key, 0))
    stop = time.monotonic() + SECONDS
    failures = []
    reads = [0]

    def write(key):
        client = make_client(server)
        n = 1
        while time.monotonic() < stop:
            client.put_object(Bucket=bucket, Key=key, Body=body_for(key, n))
            n += 1

    def read(offset):
        client = make_client(server)
        i = offset
        while time.monotonic() < stop:
            key = keys[i % KEYS]
            i += 1
            try:
                got = client.get_object(Bucket=bucket, Key=key)["Body"].read()
            except Exception as exc:  # noqa: BLE001 - every failure is the finding
                failures.append(f"{key}: {exc}")
                continue
            name, n, _ = got.split(b":", 2)
            if name.decode() != key or got != body_for(key, int(n)):
                failures.append(f"{key}: a body no PUT wrote ({len(got)} bytes)")
            reads[0] += 1

    threads = [threading.Thread(target=write, args=(k,)) for k in keys]
    threads += [threading.Thread(target=read, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert reads[0] > 50, "too few reads to mean anything"
    assert failures == [], failures[:5]
