#!/usr/bin/env python3
"""A quick GET/PUT benchmark against a running strata (single client, loopback).

  scripts/bench_get.py --endpoint http://127.0.0.1:9000 [--big-mib 256] [--rounds 8]

Large objects: PUT and GET of one --big-mib object with curl (presigned URLs, body to
/dev/null), MiB/s per round, median reported. Small objects: --small-gets GETs of a 4 KiB
object over one keep-alive connection (http.client), requests/s and p50/p99 latency.
Needs boto3 (only to presign) and curl. Used for the figures in storage/README.md.
"""
import argparse
import http.client
import os
import statistics
import subprocess
import tempfile
import time
import urllib.parse

import boto3
import botocore.config


def client(args):
    return boto3.client(
        "s3", endpoint_url=args.endpoint, region_name="us-east-1",
        aws_access_key_id=args.access_key, aws_secret_access_key=args.secret_key,
        config=botocore.config.Config(s3={"addressing_style": "path"},
                                      signature_version="s3v4"))


def curl_speed(cmd):
    out = subprocess.run(cmd + ["-s", "-o", "/dev/null", "-w", "%{http_code} %{time_total}"],
                         check=True, capture_output=True, text=True).stdout.split()
    if out[0] != "200":
        raise SystemExit(f"HTTP {out[0]} from {' '.join(cmd)}")
    return float(out[1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--endpoint", default="http://127.0.0.1:9000")
    p.add_argument("--access-key", default="strata")
    p.add_argument("--secret-key", default="strata-secret-key")
    p.add_argument("--bucket", default="bench")
    p.add_argument("--big-mib", type=int, default=256)
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--small-gets", type=int, default=5000)
    args = p.parse_args()

    s3 = client(args)
    try:
        s3.create_bucket(Bucket=args.bucket)
    except s3.exceptions.BucketAlreadyOwnedByYou:
        pass

    size = args.big_mib << 20
    with tempfile.NamedTemporaryFile(dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as f:
        chunk = os.urandom(1 << 20)
        for _ in range(args.big_mib):
            f.write(chunk)
        f.flush()
        put_url = s3.generate_presigned_url(
            "put_object", Params={"Bucket": args.bucket, "Key": "big"}, ExpiresIn=3600)
        puts = [size / (1 << 20) / curl_speed(["curl", "-T", f.name, put_url])
                for _ in range(max(1, args.rounds // 2))]
    get_url = s3.generate_presigned_url(
        "get_object", Params={"Bucket": args.bucket, "Key": "big"}, ExpiresIn=3600)
    curl_speed(["curl", get_url])  # warm the page cache
    gets = [size / (1 << 20) / curl_speed(["curl", get_url]) for _ in range(args.rounds)]
    print(f"PUT {args.big_mib} MiB: median {statistics.median(puts):.0f} MiB/s "
          f"(rounds: {', '.join(f'{x:.0f}' for x in puts)})")
    print(f"GET {args.big_mib} MiB: median {statistics.median(gets):.0f} MiB/s "
          f"(rounds: {', '.join(f'{x:.0f}' for x in gets)})")

    s3.put_object(Bucket=args.bucket, Key="small", Body=os.urandom(4096))
    url = urllib.parse.urlsplit(s3.generate_presigned_url(
        "get_object", Params={"Bucket": args.bucket, "Key": "small"}, ExpiresIn=3600))
    conn = http.client.HTTPConnection(url.hostname, url.port)
    target = url.path + "?" + url.query
    lat = []
    start = time.perf_counter()
    for _ in range(args.small_gets):
        t = time.perf_counter()
        conn.request("GET", target)
        r = conn.getresponse()
        body = r.read()
        if r.status != 200 or len(body) != 4096:
            raise SystemExit(f"small GET: HTTP {r.status}, {len(body)} bytes")
        lat.append(time.perf_counter() - t)
    elapsed = time.perf_counter() - start
    lat.sort()
    print(f"GET 4 KiB x{args.small_gets}: {args.small_gets / elapsed:.0f} req/s, "
          f"p50 {lat[len(lat) // 2] * 1e6:.0f} us, p99 {lat[len(lat) * 99 // 100] * 1e6:.0f} us")


if __name__ == "__main__":
    main()
