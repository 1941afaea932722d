#!/usr/bin/env python3
"""Smoke test of the benchmark harness (ctest e2e_bench_smoke): strata-bench against the
strata binary of this build for a few seconds on a handful of objects. It keeps the harness
honest, not fast: every mode runs, its JSON has the fields tools/bench/run.py reads, errors
are zero where they must be and counted where they must be.

Environment: STRATA_BIN, STRATA_BENCH_BIN (set by tests/e2e/CMakeLists.txt).
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

STRATA = os.environ["STRATA_BIN"]
DELAY_PROXY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                           "bench", "delay_proxy.py")
BENCH = os.environ["STRATA_BENCH_BIN"]
RUN_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "bench",
                      "run.py")
LOAD_FIELDS = {"requests", "errors", "bytes", "seconds", "req_per_s", "mb_per_s", "p50_ms",
               "p99_ms", "max_ms", "ttfb_p50_ms", "ttfb_p99_ms", "first_error"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bench(*args, expect_rc=0):
    r = subprocess.run([BENCH, *map(str, args)], capture_output=True, text=True, timeout=60)
    assert r.returncode == expect_rc, f"{args}: rc {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r.stdout


def bench_json(*args, expect_rc=0):
    out = json.loads(bench(*args, expect_rc=expect_rc).strip().splitlines()[-1])
    return out


def wait_for_port(port, proc, timeout=60):
    deadline = time.time() + timeout
    while True:
        assert proc.poll() is None, f"{proc.args[0]} exited at start"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            assert time.time() < deadline, f"{proc.args[0]} did not start"
            time.sleep(0.1)


def main():
    work = tempfile.mkdtemp(prefix="bench-smoke-")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    conf = os.path.join(work, "strata.toml")
    config = f"""[server]
listen = "127.0.0.1:{port}"
data_dir = "{work}/data"
threads = 2
fsync = true
log_level = "warn"
[[users]]
access_key = "strata"
secret_key = "strata-secret-key"
admin = true
[[tiers]]
name = "hot"
kind = "local"
path = "{work}/data/hot"
[storage_classes]
STANDARD = "hot"
"""
    with open(conf, "w") as f:
        f.write(config)
    server = subprocess.Popen([STRATA, "--config", conf], cwd=work)
    try:
        wait_for_port(port, server)

        bench("request", "--endpoint", url, "--method", "PUT", "--path", "/smoke")
        keys = ["--bucket", "smoke", "--key-prefix", "s/k", "--count", 8]
        put = bench_json("populate", "--endpoint", url, "--size", 4096, "--connections", 4, *keys)
        assert LOAD_FIELDS <= put.keys() and put["requests"] == 8 and put["errors"] == 0, put
        assert put["bytes"] == 8 * 4096, put

        for method in ("GET", "HEAD", "MIX"):
            r = bench_json("load", "--endpoint", url, "--method", method, "--connections", 4,
                           "--threads", 2, "--duration", 1.5, "--warmup", 0.2, "--random", *keys)
            assert LOAD_FIELDS <= r.keys(), r
            assert r["errors"] == 0 and r["requests"] > 0 and r["req_per_s"] > 0, r
            assert 0 < r["p50_ms"] <= r["p99_ms"] <= r["max_ms"], r
            # The header comes before the end of the answer.
            assert 0 < r["ttfb_p50_ms"] <= r["ttfb_p99_ms"] <= r["max_ms"], r
            if method == "GET":
                assert r["bytes"] == r["requests"] * 4096 or r["bytes"] >= r["requests"] * 4096, r

        mpu = bench_json("load", "--endpoint", url, "--method", "PUT", "--size", 11 << 20,
                         "--part-size", 5 << 20, "--connections", 1, "--requests", 1,
                         "--bucket", "smoke", "--key-prefix", "m/k", "--count", 1)
        assert mpu["requests"] == 1 and mpu["errors"] == 0, mpu

        lst = bench_json("list", "--endpoint", url, "--bucket", "smoke", "--max-keys", 3,
                         "--max-pages", 4, "--duration", 5)
        assert lst["errors"] == 0 and lst["pages"] == 4 and lst["keys"] == 12, lst

        paths = bench("presign", "--endpoint", url, *keys).split()
        assert len(paths) == 8 and all("X-Amz-Signature=" in p for p in paths), paths

        # Errors are counted and fail the run: missing keys answer 404.
        miss = bench_json("load", "--endpoint", url, "--method", "GET", "--connections", 2,
                          "--requests", 4, "--bucket", "smoke", "--key-prefix", "missing/",
                          "--count", 2, expect_rc=1)
        assert miss["errors"] == 4 and "404" in miss["first_error"], miss
        # Unsigned requests are refused by strata, and counted as errors too.
        bench_json("load", "--endpoint", url, "--plain", "--method", "GET", "--requests", 2,
                   *keys, expect_rc=1)
        # Only loopback targets.
        bench("load", "--endpoint", "http://10.1.2.3:80", "--requests", 1, expect_rc=2)

        crc = bench_json("crc", "--mib", 4, "--rounds", 1)
        assert crc["crc64nvme_gb_per_s"] > 0 and crc["memcpy_gb_per_s"] > 0, crc
        sig = bench_json("sigv4", "--duration", 0.2)
        assert sig["verify_header_per_s"] > 0 and sig["verify_presigned_per_s"] > 0, sig
        policy = bench_json("policy", "--duration", 0.2, "--statements", 20)
        assert policy["statements"] == 20 and policy["evaluations_per_s"] > 0, policy
        assert policy["parses_per_s"] > 0, policy
        # The lifecycle pass benchmark expires exactly the due versions (twice 20).
        lc = bench_json("lifecycle", "--objects", 200, "--due", 20, "--dir",
                        os.path.join(work, "lifecycle"))
        assert lc["expired"] == 40 and lc["due_left"] == 0 and lc["pass_s"] > 0, lc
        # The eviction policy benchmark: hit ratios in range, the optimum is C / D.
        cache = bench_json("cache", "--objects", 2000, "--fraction", 0.25, "--zipf-reads", 20000)
        assert cache["optimum"] == 0.25, cache
        assert 0 < cache["epoch_hit_ratio"] <= 0.25 and 0 <= cache["epoch_hit_ratio_lru"] < 0.25
        assert 0 < cache["zipf_hit_ratio"] < 1 and 0 < cache["zipf_hit_ratio_lru"] < 1, cache
        bench("cache", "--fraction", 1.5, expect_rc=2)
        # run.py itself drives that mode (its arguments, its rows, its report): a full run
        # once died there, 9 minutes in, on an option the mode does not take.
        out = os.path.join(work, "run-py")
        r = subprocess.run([sys.executable, RUN_PY, "--quick", "--only", "eviction", "--bin-dir",
                            os.path.dirname(BENCH), "--out", out, "--work-dir", out],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"run.py: rc {r.returncode}\n{r.stdout}\n{r.stderr}"
        reports = [f for f in os.listdir(out) if f.startswith("bench-") and f.endswith(".md")]
        assert len(reports) == 1, os.listdir(out)
        with open(os.path.join(out, reports[0])) as f:
            rows = [line for line in f if line.startswith("| eviction policy")]
        assert len(rows) == 4, rows

        # The epoch workload: every key once per epoch. This strata has no upstream, so it
        # has no read-through counters: misses are -1 ("not known"), not 0.
        ep = bench_json("epoch", "--endpoint", url, "--readers", 2, "--batch", 2, "--epochs", 2,
                        "--compute-ms", 5, "--misses", *keys)
        assert len(ep["epochs"]) == 2, ep
        for e in ep["epochs"]:
            assert e["requests"] == 8 and e["errors"] == 0 and e["misses"] == -1, ep
            assert 0 < e["utilisation"] <= 1.05 and e["mb_per_s"] > 0, ep
        # In front of it, a strata whose cold tier it is counts its misses from /metrics:
        # epoch 1 reads all 8 keys through, epoch 2 finds them on the hot tier.
        front_port = free_port()
        front_url = f"http://127.0.0.1:{front_port}"
        front_conf = os.path.join(work, "front.toml")
        with open(front_conf, "w") as f:
            # Read-through counters are kept for tiers with a capacity.
            f.write(config.replace(f"127.0.0.1:{port}", f"127.0.0.1:{front_port}")
                    .replace(f"{work}/data", f"{work}/front")
                    .replace(f'path = "{work}/front/hot"\n',
                             f'path = "{work}/front/hot"\ncapacity = {1 << 20}\n') + f"""
[[tiers]]
name = "cold"
kind = "s3"
endpoint = "{url}"
access_key = "strata"
secret_key = "strata-secret-key"
region = "us-east-1"
[prefetch]
learned = false
""")
        front = subprocess.Popen([STRATA, "--config", front_conf], cwd=work)
        try:
            wait_for_port(front_port, front)
            bench("request", "--endpoint", front_url, "--method", "HEAD", "--path", "/smoke")
            ep = bench_json("epoch", "--endpoint", front_url, "--readers", 2, "--batch", 2,
                            "--epochs", 2, "--compute-ms", 5, "--misses", *keys)
            assert [e["misses"] for e in ep["epochs"]] == [8, 0], ep
        finally:
            front.terminate()
            front.wait(10)
        bench_json("epoch", "--endpoint", url, "--readers", 2, "--epochs", 1, "--bucket", "smoke",
                   "--key-prefix", "missing/", "--count", 2, expect_rc=1)
        # Through the delay proxy each GET waits 20 ms: 8 GETs in sequence take >= 160 ms.
        proxy_port = free_port()
        proxy = subprocess.Popen([sys.executable, DELAY_PROXY, "--listen",
                                  f"127.0.0.1:{proxy_port}", "--upstream", f"127.0.0.1:{port}",
                                  "--delay-ms", "20"])
        try:
            wait_for_port(proxy_port, proxy)
            slow = bench_json("epoch", "--endpoint", f"http://127.0.0.1:{proxy_port}",
                              "--readers", 1, "--batch", 1, "--epochs", 1, "--compute-ms", 0,
                              *keys)
            assert slow["epochs"][0]["requests"] == 8, slow
            assert slow["epochs"][0]["seconds"] >= 0.16, slow
        finally:
            proxy.terminate()
            proxy.wait(10)
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        shutil.rmtree(work, ignore_errors=True)
    print("bench smoke: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
