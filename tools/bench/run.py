#!/usr/bin/env python3
"""strata's benchmark: starts strata and its baselines on loopback, runs the workloads of
tools/bench/README.md, and writes a Markdown table and a JSON file of absolute figures and
ratios against the baselines measured in the same run. Called by tools/bench/run.sh, which
builds Release and installs nginx, wrk, fio and perf first.

Every server is a child of this process on 127.0.0.1 and is stopped on exit, whatever
happens. Only the binaries, the config file and the S3 API are used: nothing here depends
on strata's internals.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
KIB = 1 << 10
MIB = 1 << 20
ACCESS, SECRET, REGION = "strata", "strata-secret-key", "us-east-1"


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def cold_tier_toml(url):
    """The [[tiers]] table of an upstream tier "cold" at `url`, with the bench's user."""
    return f"""
[[tiers]]
name = "cold"
kind = "s3"
endpoint = "{url}"
access_key = "{ACCESS}"
secret_key = "{SECRET}"
region = "{REGION}"
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


class Profile:
    """Sizes and durations of one run (full or --quick)."""

    def __init__(self, quick):
        self.quick = quick
        self.duration = 3 if quick else 20         # seconds per measured load
        self.warmup = 0.5 if quick else 2
        self.small_keys = 200 if quick else 1000   # the hot 4 KiB set
        self.big_size = 256 * MIB
        self.big_puts = 4 if quick else 8          # 256 MiB PUTs (4 connections)
        self.mem_conns = 1000
        self.mem_duration = 5 if quick else 20
        self.idx_small = 1000 if quick else 10000  # objects in the small index
        self.idx_large_goal = 10000 if quick else 1000000
        # Multipart repeats the 256 MiB PUT's cost; --quick uploads 64 MiB objects to fit.
        self.mpu_size = 64 * MIB if quick else 256 * MIB
        self.fill_budget = 20 if quick else 240    # seconds allowed for filling the large index
        self.fio_runtime = 3 if quick else 15
        self.list_duration = 3 if quick else 10
        self.cold_objects = 4 if quick else 8      # 64 MiB objects read through once each
        self.lc_small = 10000                      # lifecycle: objects queued, not due
        self.lc_large = 100000 if quick else 1000000
        self.lc_due = 1000                         # versions due at the measured pass
        self.cache_objects = 20000 if quick else 100000  # eviction policy replay
        # The epoch workload: objects x size in the upstream, compute per batch of 8.
        self.epoch_objects = 200 if quick else 1000
        self.epoch_size = 64 * KIB if quick else 256 * KIB
        self.epoch_compute_ms = 100 if quick else 200


class Bench:
    def __init__(self, args):
        self.args = args
        self.p = Profile(args.quick)
        if args.epoch_compute_ms:
            self.p.epoch_compute_ms = args.epoch_compute_ms
        self.bin = os.path.abspath(args.bin_dir)
        self.procs = {}
        self.results = []   # table rows
        self.raw = {}       # every measurement, for the JSON
        self.notes = []
        os.makedirs(args.work_dir, exist_ok=True)
        self.work = tempfile.mkdtemp(prefix="run-", dir=args.work_dir)
        self.strata_port = free_port()
        self.nginx_port = free_port()
        self.strata_url = f"http://127.0.0.1:{self.strata_port}"
        self.nginx_url = f"http://127.0.0.1:{self.nginx_port}"
        self.threads = os.cpu_count() or 1

    # ---- processes ----------------------------------------------------------------------

    def stop(self, name, sig=signal.SIGTERM, timeout=20):
        proc = self.procs.pop(name, None)
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def stop_all(self):
        for name in list(self.procs):
            self.stop(name)

    def strata_config(self, fsync, name="strata", port=None, extra="", hot=""):
        path = os.path.join(self.work, f"{name}-fsync-{str(fsync).lower()}.toml")
        data = os.path.join(self.work, name)
        with open(path, "w") as f:
            f.write(f"""# generated by tools/bench/run.py
[server]
listen = "127.0.0.1:{port or self.strata_port}"
region = "{REGION}"
data_dir = "{data}"
threads = 0
fsync = {str(fsync).lower()}
log_level = "warn"
idle_timeout = "300s"

[[users]]
access_key = "{ACCESS}"
secret_key = "{SECRET}"
admin = true

[[tiers]]
name = "hot"
kind = "local"
path = "{data}/hot"
{hot}
[storage_classes]
STANDARD = "hot"
{extra}""")
        return path

    def spawn_strata(self, name, conf, port):
        logf = open(os.path.join(self.work, f"{name}.log"), "a")
        proc = subprocess.Popen([os.path.join(self.bin, "strata"), "--config", conf],
                                stdout=logf, stderr=subprocess.STDOUT, cwd=self.work)
        self.procs[name] = proc
        wait_port(port, proc)

    def start_strata(self, fsync=True):
        self.stop("strata")
        self.spawn_strata("strata", self.strata_config(fsync), self.strata_port)
        self.strata_fsync = fsync

    def start_nginx(self):
        base = os.path.join(self.work, "nginx")
        for d in ("root/bench", "root/idx", "tmp"):
            os.makedirs(os.path.join(base, d), exist_ok=True)
        user = "user root;\n" if os.geteuid() == 0 else ""
        conf = os.path.join(base, "nginx.conf")
        # As many workers as strata has threads; the body temp dir is on the same filesystem
        # as the root, so a WebDAV PUT is a write and a rename, like strata's.
        with open(conf, "w") as f:
            f.write(f"""# generated by tools/bench/run.py
{user}worker_processes {self.threads};
daemon off;
pid {base}/nginx.pid;
error_log {base}/error.log warn;
worker_rlimit_nofile 16384;
events {{ worker_connections 8192; }}
http {{
  access_log off;
  default_type application/octet-stream;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_requests 100000000;
  keepalive_timeout 300s;
  client_max_body_size 0;
  client_body_temp_path {base}/tmp;
  proxy_temp_path {base}/tmp;
  fastcgi_temp_path {base}/tmp;
  uwsgi_temp_path {base}/tmp;
  scgi_temp_path {base}/tmp;
  server {{
    listen 127.0.0.1:{self.nginx_port} backlog=4096;
    root {base}/root;
    location / {{
      dav_methods PUT;
      create_full_put_path on;
      dav_access user:rw group:r all:r;
    }}
  }}
}}
""")
        logf = open(os.path.join(base, "stdout.log"), "a")
        proc = subprocess.Popen(["nginx", "-p", base, "-c", conf], stdout=logf,
                                stderr=subprocess.STDOUT)
        self.procs["nginx"] = proc
        wait_port(self.nginx_port, proc)

    def strata_pid(self):
        return self.procs["strata"].pid

    # ---- load generators ----------------------------------------------------------------

    def bench(self, mode, *extra, url=None, plain=False, check=True):
        cmd = [os.path.join(self.bin, "strata-bench"), mode]
        if mode not in ("crc", "sigv4", "lifecycle", "cache"):
            cmd += ["--endpoint", url or self.strata_url]
            if plain:
                cmd.append("--plain")
        cmd += [str(x) for x in extra]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0 and check:
            raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}{r.stdout[-2000:]}")
        if mode in ("request", "presign"):
            return r.stdout
        return json.loads(r.stdout.strip().splitlines()[-1])

    def load(self, label, side, *extra, url=None, plain=False):
        log(f"{label} [{side}]")
        res = self.bench("load", "--threads", self.threads, "--label", label, *extra,
                         url=url, plain=plain)
        self.raw.setdefault(label, {})[side] = res
        return res

    def wrk(self, label, side, url, paths_file, conns, timeout="60s"):
        log(f"{label} [{side}] (wrk)")
        cmd = ["wrk", "-t", str(self.threads), "-c", str(conns), "-d", f"{self.p.duration}s",
               "--timeout", timeout, "-s", os.path.join(HERE, "wrk_paths.lua"), url, "--",
               paths_file]
        r = subprocess.run(cmd, capture_output=True, text=True)
        m = re.search(r"^WRKJSON (.*)$", r.stdout, re.M)
        if r.returncode != 0 or not m:
            raise RuntimeError(f"wrk failed: {r.stdout}{r.stderr}")
        w = json.loads(m.group(1))
        secs = w["duration_us"] / 1e6
        errors = sum(w[k] for k in w if k.startswith("errors_"))
        res = {"tool": "wrk", "requests": w["requests"], "errors": errors, "bytes": w["bytes"],
               "seconds": secs, "req_per_s": w["requests"] / secs,
               "mb_per_s": w["bytes"] / secs / 1e6, "p50_ms": w["p50_us"] / 1e3,
               "p90_ms": w["p90_us"] / 1e3, "p99_ms": w["p99_us"] / 1e3,
               "mean_ms": w["mean_us"] / 1e3, "wrk": w}
        # Timeouts of a 256 MiB transfer cut off by the end of the run are not failures;
        # a non-2xx answer always is.
        if w["errors_status"] or w["errors_connect"] or w["errors_read"] or w["errors_write"]:
            raise RuntimeError(f"{label} [{side}]: wrk saw errors: {w}")
        self.raw.setdefault(label, {})[side] = res
        return res

    def fio(self, name, *extra):
        d = os.path.join(self.work, "fio")
        os.makedirs(d, exist_ok=True)
        cmd = ["fio", f"--name={name}", f"--directory={d}", "--output-format=json",
               "--group_reporting", "--ioengine=psync"] + list(extra)
        log(f"fio {name}")
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"fio failed: {r.stderr}")
        job = json.loads(r.stdout[r.stdout.index("{"):])["jobs"][0]["write"]
        shutil.rmtree(d, ignore_errors=True)
        res = {"iops": job["iops"], "mb_per_s": job["bw_bytes"] / 1e6}
        self.raw.setdefault("fio", {})[name] = res
        return res

    # ---- table --------------------------------------------------------------------------

    def row(self, workload, strata, baseline, ratio, target, met, unit=""):
        self.results.append({"workload": workload, "strata": strata, "baseline": baseline,
                             "ratio": ratio, "target": target, "met": met, "unit": unit})

    @staticmethod
    def ratio(a, b):
        return a / b if b else 0.0

    def ratio_row(self, workload, s, b, key, target, unit, bname, extra_s="", extra_b=""):
        r = self.ratio(s[key] if isinstance(s, dict) else s, b[key] if isinstance(b, dict) else b)
        sv = s[key] if isinstance(s, dict) else s
        bv = b[key] if isinstance(b, dict) else b
        met = None if target is None else r >= target
        fmt = ",.1f" if unit == "%" else ",.0f"
        self.row(workload, f"{sv:{fmt}} {unit}{extra_s}", f"{bv:{fmt}} {unit} ({bname}){extra_b}",
                 round(r, 3), f">= {target}x" if target is not None else "report", met, unit)

    @staticmethod
    def lat(res):
        return f" (p50 {res['p50_ms']:.2f} ms, p99 {res['p99_ms']:.2f} ms)"

    # ---- workloads ----------------------------------------------------------------------

    def micro(self):
        log("crc and sigv4 micro benchmarks")
        crc = self.bench("crc", "--mib", 64 if self.p.quick else 256, "--rounds",
                         3 if self.p.quick else 5)
        sig = self.bench("sigv4", "--duration", 1 if self.p.quick else 3)
        self.raw["crc"], self.raw["sigv4"] = crc, sig
        r = self.ratio(crc["crc64nvme_gb_per_s"], crc["memcpy_gb_per_s"])
        self.row(f"CRC64NVME over {crc['buffer_bytes'] // MIB} MiB, 1 core "
                 f"({'PCLMULQDQ' if crc['clmul'] else 'portable'})",
                 f"{crc['crc64nvme_gb_per_s']:.2f} GB/s",
                 f"{crc['memcpy_gb_per_s']:.2f} GB/s (memcpy)", round(r, 3), "report", None)
        self.row("SigV4 verify, header-signed GET, 1 core", f"{sig['verify_header_per_s']:,.0f} /s",
                 "-", None, "report", None)
        self.row("SigV4 verify, presigned GET, 1 core", f"{sig['verify_presigned_per_s']:,.0f} /s",
                 "-", None, "report", None)
        policy = self.bench("policy", "--duration", 1 if self.p.quick else 3, "--statements", 20)
        self.raw["policy"] = policy
        self.row("bucket policy evaluation (20 statements, the allowing one last), 1 core",
                 f"{policy['evaluations_per_s']:,.0f} /s",
                 f"{sig['verify_header_per_s']:,.0f} /s (SigV4 verify)",
                 round(self.ratio(policy["evaluations_per_s"], sig["verify_header_per_s"]), 3),
                 "report", None)

    def disk_baselines(self):
        rt = self.p.fio_runtime
        self.fio_fsync = self.fio("fsync4k", "--rw=write", "--bs=4k", "--size=16m",
                                  "--numjobs=64", "--fsync=1", "--time_based",
                                  f"--runtime={rt}")
        size = "256m" if self.p.quick else "1g"
        self.fio_seq = self.fio("seqwrite", "--rw=write", "--bs=1m", f"--size={size}",
                                "--numjobs=4", "--end_fsync=1")

    def small_objects(self):
        d, n = self.p.duration, self.p.small_keys
        keys = ["--bucket", "bench", "--key-prefix", "small/k", "--count", n]
        put_keys = ["--bucket", "bench", "--key-prefix", "put/k", "--count", 10_000_000]
        # PUT 4 KiB, 64 connections: strata with fsync on and the body's SHA-256 signed
        # (what boto3 sends over http) against nginx's WebDAV PUT of the same bytes.
        s = self.load("PUT 4 KiB", "strata", "--method", "PUT", "--size", 4096,
                      "--connections", 64, "--duration", d, "--warmup", self.p.warmup, *put_keys)
        b = self.load("PUT 4 KiB", "nginx", "--method", "PUT", "--size", 4096, "--connections",
                      64, "--duration", d, "--warmup", self.p.warmup, *put_keys,
                      url=self.nginx_url, plain=True)
        self.ratio_row("PUT 4 KiB, 64 conn, fsync on (strata-bench)", s, b, "req_per_s", 0.5,
                       "req/s", "nginx WebDAV PUT, no fsync", self.lat(s), self.lat(b))
        self.ratio_row("PUT 4 KiB, 64 conn, fsync on, vs disk fsync rate", s["req_per_s"],
                       self.fio_fsync["iops"], None, 0.5, "req/s",
                       "fio 4 KiB write+fsync, 64 jobs")

        # The hot set, written to both servers by the same generator.
        self.bench("populate", "--size", 4096, "--connections", 16, *keys)
        self.bench("populate", "--size", 4096, "--connections", 16, *keys, url=self.nginx_url,
                   plain=True)
        paths = os.path.join(self.work, "small-paths.txt")
        with open(paths, "w") as f:
            f.write(self.bench("presign", "--expires", 7200, *keys))

        if self.args.profile and shutil.which("perf"):
            prof = subprocess.Popen(
                ["perf", "record", "-F", "499", "-g", "-o", os.path.join(self.work, "perf.data"),
                 "-p", str(self.strata_pid())], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)
            self.procs["perf"] = prof
        s = self.wrk("hot GET 4 KiB", "strata", self.strata_url, paths, 64)
        if "perf" in self.procs:
            self.stop("perf", signal.SIGINT, 60)
            self.write_profile()
        b = self.wrk("hot GET 4 KiB", "nginx", self.nginx_url, paths, 64)
        self.ratio_row(f"hot GET 4 KiB ({n} keys), 64 conn (wrk, presigned URLs)", s, b,
                       "req_per_s", 0.6, "req/s", "nginx", self.lat(s), self.lat(b))

        common = ["--method", "GET", "--connections", 64, "--duration", d, "--warmup",
                  self.p.warmup, *keys]
        s = self.load("hot GET 4 KiB signed", "strata", *common)
        b = self.load("hot GET 4 KiB signed", "nginx", *common, url=self.nginx_url, plain=True)
        self.ratio_row(f"hot GET 4 KiB, 64 conn, SigV4 header-signed (strata-bench)", s, b,
                       "req_per_s", None, "req/s", "nginx, unsigned", self.lat(s), self.lat(b))

        mix = ["--method", "MIX", "--read-percent", 90, "--size", 4096, "--connections", 64,
               "--duration", d, "--warmup", self.p.warmup, "--random", *keys]
        s = self.load("mixed 90/10", "strata", *mix)
        b = self.load("mixed 90/10", "nginx", *mix, url=self.nginx_url, plain=True)
        self.ratio_row("mixed 90% GET / 10% PUT 4 KiB, 64 conn, fsync on", s, b, "req_per_s",
                       None, "req/s", "nginx GET + WebDAV PUT", self.lat(s), self.lat(b))

    def big_objects(self):
        size = self.p.big_size
        mb = size // MIB
        keys = ["--bucket", "bench", "--key-prefix", "big/k", "--count", 4]
        s = self.load("PUT 256 MiB", "strata", "--method", "PUT", "--size", size,
                      "--connections", 4, "--requests", self.p.big_puts, *keys)
        self.ratio_row(f"PUT {mb} MiB, 4 conn, fsync on ({self.p.big_puts} objects)",
                       s, self.fio_seq, "mb_per_s", 0.7, "MB/s",
                       "fio sequential 1 MiB writes, 4 jobs, end_fsync")
        part, mpu = 16 * MIB, self.p.mpu_size
        s = self.load("multipart PUT", "strata", "--method", "PUT", "--size", mpu,
                      "--part-size", part, "--connections", 4, "--requests", self.p.big_puts,
                      "--bucket", "bench", "--key-prefix", "mpu/k", "--count", 4)
        self.ratio_row(f"multipart PUT {mpu // MIB} MiB (16 MiB parts), 4 conn, fsync on "
                       f"({self.p.big_puts} objects)", s, self.fio_seq, "mb_per_s", None, "MB/s",
                       "fio sequential")
        # One copy on nginx for the GET, written by the same generator.
        self.bench("populate", "--size", size, "--connections", 1, "--bucket", "bench",
                   "--key-prefix", "big/k", "--count", 1, url=self.nginx_url, plain=True)
        paths = os.path.join(self.work, "big-paths.txt")
        with open(paths, "w") as f:
            f.write(self.bench("presign", "--expires", 7200, "--bucket", "bench",
                               "--key-prefix", "big/k", "--count", 1))
        s = self.wrk("hot GET 256 MiB", "strata", self.strata_url, paths, 4, "120s")
        b = self.wrk("hot GET 256 MiB", "nginx", self.nginx_url, paths, 4, "120s")
        self.ratio_row(f"hot GET {mb} MiB, 4 conn (wrk, presigned URL)", s, b, "mb_per_s", 0.8,
                       "MB/s", "nginx, sendfile")

    def cold_tier(self):
        """Cold read-through GET: 64 MiB objects only the upstream has, each read once
        through a strata whose cold tier is that upstream, against reading them from the
        upstream directly. The upstream is a second strata (on loopback, its bytes in the
        page cache after the baseline pass), so the ratio is strata's own read-through cost:
        an upstream HEAD, the stream, and the hot-tier fill written alongside."""
        up_port, front_port = free_port(), free_port()
        up_url, front_url = f"http://127.0.0.1:{up_port}", f"http://127.0.0.1:{front_port}"
        self.spawn_strata("upstream", self.strata_config(True, "upstream", up_port), up_port)
        cold = cold_tier_toml(up_url)
        self.spawn_strata("front", self.strata_config(True, "front", front_port, cold),
                          front_port)
        n, size = self.p.cold_objects, 64 * MIB
        keys = ["--bucket", "cold", "--key-prefix", "obj/k", "--count", n]
        self.bench("request", "--method", "PUT", "--path", "/cold", url=up_url)
        self.bench("populate", "--size", size, "--connections", 1, *keys, url=up_url)
        # The front binds the upstream bucket on its first request: not part of a GET's time.
        self.bench("request", "--method", "HEAD", "--path", "/cold", url=front_url)
        get = ["--method", "GET", "--connections", 1, "--requests", n, *keys]
        b = self.load("cold GET 64 MiB", "upstream", *get, url=up_url)
        s = self.load("cold GET 64 MiB", "strata", *get, url=front_url)
        self.ratio_row(f"cold read-through GET 64 MiB, 1 conn ({n} objects, each once)", s, b,
                       "mb_per_s", 0.9, "MB/s", "the upstream read directly")
        gap = s["ttfb_p50_ms"] - b["ttfb_p50_ms"]
        self.row("cold read-through GET 64 MiB: time to first byte, p50",
                 f"{s['ttfb_p50_ms']:.2f} ms", f"{b['ttfb_p50_ms']:.2f} ms (the upstream)",
                 None, "within 2 ms", gap <= 2.0, "ms")
        self.stop("front")
        self.stop("upstream")

    # ---- cluster ------------------------------------------------------------------------

    def start_etcd(self):
        """A fresh etcd (Debian's etcd-server) on loopback for the cluster workloads."""
        port, peer_port = free_port(), free_port()
        url, peer = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{peer_port}"
        base = os.path.join(self.work, "etcd")
        logf = open(base + ".log", "a")
        self.procs["etcd"] = subprocess.Popen(
            ["etcd", "--name", "bench", "--data-dir", base, "--listen-client-urls", url,
             "--advertise-client-urls", url, "--listen-peer-urls", peer,
             "--initial-advertise-peer-urls", peer, "--initial-cluster", f"bench={peer}"],
            stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        wait_port(port, self.procs["etcd"])
        return url

    def start_member(self, etcd, replicas, i, read_cache="0"):
        """Gateway gw-`i` (zone-`i`) of the cluster with `replicas` copies of each key and a
        read cache of `read_cache` ("0": none, so a read through a non-owner always streams
        from the owner); returns its URL once it serves."""
        port = free_port()
        name = f"bench-r{replicas}"
        cluster = f"""
[cluster]
name = "{name}"
node = "gw-{i}"
zone = "zone-{i}"
peer_listen = "127.0.0.1:{free_port()}"
etcd = ["{etcd}"]
replicas = {replicas}
secret = "bench-cluster-secret-0123456789"
read_cache = "{read_cache}"
"""
        conf = self.strata_config(True, f"{name}-gw{i}", port, cluster)
        self.spawn_strata(f"{name}-gw{i}", conf, port)
        return f"http://127.0.0.1:{port}"

    def start_cluster(self, etcd, replicas, members=3, read_caches=None):
        """`members` gateways in distinct zones, one cluster (its own etcd prefix) with
        `replicas` copies of each key, gw-i with a read cache of read_caches[i] (default
        none); returns their URLs once each sees all members."""
        urls = [self.start_member(etcd, replicas, i, (read_caches or {}).get(i, "0"))
                for i in range(1, members + 1)]
        end = time.time() + 60
        for url in urls:
            while self.admin_json(url, "/_strata/admin/cluster?probe=false")["members"].__len__() \
                    < members:
                if time.time() > end:
                    raise RuntimeError(f"{url} did not see {members} members")
                time.sleep(0.1)
        return urls

    def join_fourth(self, etcd, replicas, urls):
        """Adds gw-4 to the three-member cluster at `urls` holding the bucket "bench": the
        copies moved (dropped by the members that lost a key to gw-4, once it caught up)
        against the ideal keys x replicas / 4, the bytes moved and the time until the
        change settled (every member ready, no scan running, nothing under-replicated)."""
        import boto3
        s3 = boto3.client("s3", endpoint_url=urls[0], aws_access_key_id=ACCESS,
                          aws_secret_access_key=SECRET, region_name=REGION)
        keys = sum(page.get("KeyCount", 0) for page in
                   s3.get_paginator("list_objects_v2").paginate(Bucket="bench"))
        started = time.time()
        urls = urls + [self.start_member(etcd, replicas, 4)]
        end = started + 600
        while True:
            views = [self.admin_json(url, "/_strata/admin/cluster?probe=false") for url in urls]
            done = all(len(v["members"]) == 4 and all(m["state"] == "ready" for m in v["members"])
                       and not v["replication"]["repairing"] and not v["replication"]["catching_up"]
                       and v["replication"]["under_replicated"] == 0 for v in views)
            dropped = sum(v["replication"]["keys_dropped"] for v in views[:3])
            if done and len({v["epoch"] for v in views}) == 1 and dropped > 0:
                # A last look a moment later: a scan may have been about to start.
                time.sleep(1)
                again = [self.admin_json(url, "/_strata/admin/cluster?probe=false")
                         for url in urls]
                if all(not v["replication"]["repairing"] for v in again) and \
                        sum(v["replication"]["keys_dropped"] for v in again[:3]) == dropped:
                    break
            if time.time() > end:
                raise RuntimeError("the fourth member's join did not settle in 600 s")
            time.sleep(0.2)
        seconds = time.time() - started
        moved_bytes = sum(v["replication"]["bytes_moved"] for v in views)
        return {"keys": keys, "moved": dropped, "ideal": keys * replicas / 4,
                "seconds": seconds, "bytes": moved_bytes}

    def stop_cluster(self, replicas, members=3):
        for i in range(1, members + 1):
            self.stop(f"bench-r{replicas}-gw{i}")

    @staticmethod
    def admin_json(url, path_query):
        """A GET of strata's admin API, signed with the bench's admin user (SigV4)."""
        import botocore.auth
        import botocore.awsrequest
        import botocore.credentials
        import urllib.request
        request = botocore.awsrequest.AWSRequest(method="GET", url=url + path_query)
        botocore.auth.S3SigV4Auth(botocore.credentials.Credentials(ACCESS, SECRET), "s3",
                                REGION).add_auth(request)
        prepared = request.prepare()
        req = urllib.request.Request(prepared.url, headers=dict(prepared.headers))
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    def owned_paths(self, url, bucket, prefix, count, owner_self):
        """Presigned GET paths through `url` of the keys it is (or is not) the primary of."""
        lines = self.bench("presign", "--expires", 7200, "--bucket", bucket, "--key-prefix",
                           prefix, "--count", count, url=url).splitlines()
        keep = []
        for line in lines:
            key = line.split("?", 1)[0].split("/", 2)[2]
            owners = self.admin_json(url, "/_strata/admin/cluster/owners?bucket="
                                     f"{bucket}&key={urllib.parse.quote(key, safe='')}")
            if owners["owners"][0]["self"] == owner_self:
                keep.append(line)
        return keep

    def cluster_tier(self):
        """The cluster (3 gateways on loopback, TCP peer transport): a PUT's cost of
        durability on 3 owners against 1, and the warm read (through a gateway that does not
        own the key, its bytes streamed from the owner over the peer port) against the hot
        read on the owner itself, the same gateway answering both."""
        etcd = self.start_etcd()
        d, conns = self.p.duration, 16
        put = ["--method", "PUT", "--size", MIB, "--connections", conns, "--duration", d,
               "--warmup", self.p.warmup, "--bucket", "bench", "--key-prefix", "put/k",
               "--count", 10_000_000]
        results = {}
        for replicas in (1, 3):
            # gw-2 keeps a read cache (the default); gw-1, which the warm rows read
            # through, keeps none, so its warm reads always stream from the owner.
            urls = self.start_cluster(etcd, replicas, read_caches={2: "2GiB"})
            self.bench("request", "--method", "PUT", "--path", "/bench", url=urls[0])
            results[replicas] = self.load(f"cluster PUT 1 MiB r{replicas}", "strata", *put,
                                          url=urls[0])
            if replicas == 3:
                # The PUT load left keys of 1 MiB: a fourth member joins.
                join = self.join_fourth(etcd, replicas, urls)
                self.stop_cluster(replicas, members=4)
                continue
            # Warm against hot: read through urls[0] the keys it owns, and the others'.
            small = ["--bucket", "bench", "--key-prefix", "warm/s", "--count", 300]
            self.bench("populate", "--size", 4096, "--connections", 16, *small, url=urls[0])
            big_n = 9
            big = ["--bucket", "bench", "--key-prefix", "warm/b", "--count", big_n]
            self.bench("populate", "--size", 64 * MIB, "--connections", 2, *big, url=urls[0])
            rows = {}
            # 4 KiB twice: 64 connections saturate the two cores, so their p50 is the rate's
            # inverse; 2 connections show the added latency of the hop through a non-owner.
            for label, prefix, count, c, timeout in (("4 KiB", "warm/s", 300, 64, "60s"),
                                                     ("4 KiB 2 conn", "warm/s", 300, 2, "60s"),
                                                     ("64 MiB", "warm/b", big_n, 4, "120s")):
                for side, owner_self in (("hot", True), ("warm", False)):
                    paths = self.owned_paths(urls[0], "bench", prefix, count, owner_self)
                    if not paths:
                        raise RuntimeError(f"no {side} keys of {prefix} on gw-1")
                    f = os.path.join(self.work, f"cluster-{side}-{prefix.replace('/', '-')}.txt")
                    with open(f, "w") as out:
                        out.write("\n".join(paths) + "\n")
                    rows[(label, side)] = self.wrk(f"cluster GET {label}", side, urls[0], f, c,
                                                   timeout)
            # The same reads through gw-2's read cache: the owner still answers each GET,
            # gw-2 sends the bytes of its copy (filled by one read of each key first).
            for label, prefix, count, c, timeout in (("4 KiB", "warm/s", 300, 64, "60s"),
                                                     ("64 MiB", "warm/b", big_n, 4, "120s")):
                paths = self.owned_paths(urls[1], "bench", prefix, count, False)
                for path in paths:
                    with urllib.request.urlopen(urls[1] + path, timeout=60) as r:
                        while r.read(1 << 20):
                            pass
                f = os.path.join(self.work, f"cluster-cached-{prefix.replace('/', '-')}.txt")
                with open(f, "w") as out:
                    out.write("\n".join(paths) + "\n")
                rows[(label, "cached")] = self.wrk(f"cluster GET {label}", "cached", urls[1], f,
                                                   c, timeout)
            self.stop_cluster(replicas)
        self.stop("etcd")
        r1, r3 = results[1], results[3]
        self.ratio_row(f"cluster PUT 1 MiB, {conns} conn, fsync on: replicas = 3 vs 1 "
                       "(3 gateways)", r3, r1, "req_per_s", None, "req/s", "replicas = 1",
                       self.lat(r3), self.lat(r1))
        hot, warm = rows[("4 KiB", "hot")], rows[("4 KiB", "warm")]
        p50 = self.ratio(hot["p50_ms"], warm["p50_ms"])
        self.row("cluster GET 4 KiB, 64 conn: warm (through a non-owner) vs hot (on the "
                 "owner), p50 latency", f"{warm['p50_ms']:.2f} ms ({warm['req_per_s']:,.0f} req/s)",
                 f"{hot['p50_ms']:.2f} ms ({hot['req_per_s']:,.0f} req/s, hot)", round(p50, 3),
                 ">= 0.5x (within 2x)", p50 >= 0.5, "ms")
        hot, warm = rows[("4 KiB 2 conn", "hot")], rows[("4 KiB 2 conn", "warm")]
        self.row("cluster GET 4 KiB, 2 conn (unloaded): warm vs hot, p50 latency",
                 f"{warm['p50_ms']:.3f} ms ({warm['req_per_s']:,.0f} req/s)",
                 f"{hot['p50_ms']:.3f} ms ({hot['req_per_s']:,.0f} req/s, hot)",
                 round(self.ratio(hot["p50_ms"], warm["p50_ms"]), 3), "report", None, "ms")
        self.ratio_row("cluster GET 64 MiB, 4 conn: warm (through a non-owner) vs hot (on "
                       "the owner)", rows[("64 MiB", "warm")], rows[("64 MiB", "hot")],
                       "mb_per_s", 0.7, "MB/s", "hot")
        hot, cached = rows[("4 KiB", "hot")], rows[("4 KiB", "cached")]
        self.row("cluster GET 4 KiB, 64 conn: a non-owner's read cache (the owner answers, the "
                 "copy's bytes) vs hot (on the owner), p50 latency",
                 f"{cached['p50_ms']:.2f} ms ({cached['req_per_s']:,.0f} req/s)",
                 f"{hot['p50_ms']:.2f} ms ({hot['req_per_s']:,.0f} req/s, hot)",
                 round(self.ratio(hot["p50_ms"], cached["p50_ms"]), 3), "report", None, "ms")
        self.ratio_row("cluster GET 64 MiB, 4 conn: a non-owner's read cache vs hot (on the "
                       "owner)", rows[("64 MiB", "cached")], rows[("64 MiB", "hot")],
                       "mb_per_s", None, "MB/s", "hot")
        moved = join["moved"] / join["ideal"]
        self.row(f"cluster join: a 4th member joins 3 holding {join['keys']:,} keys of 1 MiB "
                 "(replicas = 3): copies moved vs the ideal keys x replicas / members",
                 f"{join['moved']:,} copies ({join['bytes'] / MIB:,.0f} MiB sent, settled in "
                 f"{join['seconds']:.1f} s)", f"{join['ideal']:,.0f} (ideal)", round(moved, 3),
                 "<= 1.2x", moved <= 1.2, "copies")

    def restore_tier(self):
        """RestoreObject of GLACIER objects that only the upstream holds: n x 64 MiB asked
        for at once, timed from the first RestoreObject to the last HEAD that answers
        ongoing-request="false" (the fetcher's HEAD and ranged GETs onto the hot tier),
        against reading the same bytes from the upstream directly over one connection. The
        upstream is a second strata on loopback, as in the cold read-through workload."""
        import boto3
        from botocore.config import Config as BotoConfig
        up_port, front_port = free_port(), free_port()
        up_url, front_url = f"http://127.0.0.1:{up_port}", f"http://127.0.0.1:{front_port}"
        self.spawn_strata("restore-upstream",
                          self.strata_config(True, "restore-upstream", up_port), up_port)
        cold = 'GLACIER = "cold"\n' + cold_tier_toml(up_url) + '\n[writeback]\ndelay = "0s"\n'
        conf = self.strata_config(True, "restore-front", front_port, cold)
        self.spawn_strata("restore-front", conf, front_port)
        s3 = boto3.client("s3", endpoint_url=front_url, aws_access_key_id=ACCESS,
                          aws_secret_access_key=SECRET, region_name=REGION,
                          config=BotoConfig(retries={"max_attempts": 1}))
        n, size = self.p.cold_objects, 64 * MIB
        keys = [f"obj/k{i:09d}" for i in range(n)]
        s3.create_bucket(Bucket="arch")
        body = os.urandom(size)
        for key in keys:
            s3.put_object(Bucket="arch", Key=key, Body=body, StorageClass="GLACIER")

        def hot_objects():
            r = subprocess.run([os.path.join(self.bin, "strata-admin"), "--config", conf,
                                "usage", "--json"], capture_output=True, text=True, check=True)
            return sum(l["objects"] for l in json.loads(r.stdout)["buckets"]
                       if l["bucket"] == "arch" and l["tier"] == "hot")

        def wait(cond, what, timeout=300):
            deadline = time.time() + timeout
            while not cond():
                if time.time() > deadline:
                    raise RuntimeError(f"restore workload: timed out waiting for {what}")
                time.sleep(0.05)

        # Written back, then the local copies dropped: only the upstream holds them.
        wait(lambda: hot_objects() == 0, "the GLACIER copies to leave the hot tier")
        get = ["--method", "GET", "--connections", 1, "--requests", n, "--bucket", "arch",
               "--key-prefix", "obj/k", "--count", n]
        b = self.load("restore 64 MiB", "upstream", *get, url=up_url)
        log("restore 64 MiB [strata]")
        started = time.time()
        for key in keys:
            s3.restore_object(Bucket="arch", Key=key, RestoreRequest={"Days": 1})
        wait(lambda: all('ongoing-request="false"' in
                         (s3.head_object(Bucket="arch", Key=k).get("Restore") or "")
                         for k in keys), "the restores")
        seconds = time.time() - started
        mb_per_s = n * size / 1e6 / seconds
        self.raw["restore 64 MiB"]["strata"] = {"seconds": seconds, "mb_per_s": mb_per_s}
        self.row(f"RestoreObject of {n} x 64 MiB GLACIER objects at once, until HEAD says "
                 f"restored", f"{mb_per_s:.0f} MB/s ({seconds:.2f} s)",
                 f"{b['mb_per_s']:.0f} MB/s (the upstream read directly, 1 conn)",
                 self.ratio(mb_per_s, b["mb_per_s"]), "report", None, "MB/s")
        self.stop("restore-front")
        self.stop("restore-upstream")

    def epoch_workload(self):
        """Training reads (the epoch workload): a dataset only the upstream has, each
        request to it delayed 5 ms by tools/bench/delay_proxy.py, a hot tier that holds
        40% of it, 8 readers taking a new shuffled order each epoch and a fixed compute
        time per batch of 8 (strata-bench epoch): utilisation and hit ratio per epoch, with
        learned prefetch on and off, the same generator on both sides."""
        p = self.p
        n, size = p.epoch_objects, p.epoch_size
        up_port, proxy_port = free_port(), free_port()
        up_url = f"http://127.0.0.1:{up_port}"
        self.spawn_strata("epoch-upstream",
                          self.strata_config(True, "epoch-upstream", up_port), up_port)
        proxy = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "delay_proxy.py"), "--listen",
             f"127.0.0.1:{proxy_port}", "--upstream", f"127.0.0.1:{up_port}", "--delay-ms", "5"])
        self.procs["delay-proxy"] = proxy
        wait_port(proxy_port, proxy)
        keys = ["--bucket", "dataset", "--key-prefix", "train/k", "--count", n]
        self.bench("request", "--method", "PUT", "--path", "/dataset", url=up_url)
        self.bench("populate", "--size", size, "--connections", 4, *keys, url=up_url)
        capacity = int(n * size * 0.40 / 0.95)  # the high mark holds 40% of the dataset
        cold = cold_tier_toml(f"http://127.0.0.1:{proxy_port}")
        runs = {}
        for mode in ("on", "off"):
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            name = f"epoch-prefetch-{mode}"
            prefetch = f"\n[prefetch]\nlearned = {'true' if mode == 'on' else 'false'}\n" \
                       "concurrency = 16\n"
            self.spawn_strata(name, self.strata_config(True, name, port, cold + prefetch,
                                                       hot=f"capacity = {capacity}\n"), port)
            self.bench("request", "--method", "HEAD", "--path", "/dataset", url=url)
            log(f"epoch workload, prefetch {mode}")
            runs[mode] = self.bench("epoch", "--readers", 8, "--batch", 8, "--epochs", 3,
                                    "--compute-ms", p.epoch_compute_ms, "--misses", *keys,
                                    url=url)
            self.stop(name)
        self.stop("delay-proxy")
        self.stop("epoch-upstream")
        self.raw["epoch"] = runs
        for e, (on, off) in enumerate(zip(runs["on"]["epochs"], runs["off"]["epochs"]), 1):
            def describe(r):
                hits = 1 - r["misses"] / n if r["misses"] >= 0 else float("nan")
                return f"{r['utilisation']:.1%} busy, {hits:.0%} hits, {r['seconds']:.1f} s"
            speedup = self.ratio(off["seconds"], on["seconds"])
            met = None if e == 1 else on["utilisation"] >= 0.95 and speedup >= 3
            self.row(f"epoch {e}: {n} x {size // KIB} KiB behind a 5 ms upstream, hot tier "
                     f"40% of it, 8 readers, {p.epoch_compute_ms} ms compute per batch of 8",
                     describe(on) + " (prefetch on)", describe(off) + " (prefetch off)",
                     round(speedup, 3), "report" if e == 1 else ">= 95% busy, >= 3x", met)

    def memory(self):
        pid = self.strata_pid()
        # Writing 5 to clear_refs resets VmHWM, so the peak is this workload's alone.
        try:
            with open(f"/proc/{pid}/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            self.notes.append("could not reset VmHWM; the memory peak includes earlier workloads")
        before = self.rss(pid)
        log(f"memory: {self.p.mem_conns} connections downloading 256 MiB [strata]")
        cmd = [os.path.join(self.bin, "strata-bench"), "load", "--endpoint", self.strata_url,
               "--threads", self.threads, "--method", "GET", "--connections",
               self.p.mem_conns, "--duration", self.p.mem_duration, "--bucket", "bench",
               "--key-prefix", "big/k", "--count", 1]
        proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        self.procs["memory-load"] = proc  # stopped with the servers if the run is interrupted
        peak_sampled = 0
        while proc.poll() is None:
            peak_sampled = max(peak_sampled, self.rss(pid)["VmRSS"])
            time.sleep(0.1)
        out, err = proc.communicate()
        self.procs.pop("memory-load", None)
        after = self.rss(pid)
        res = json.loads(out.strip().splitlines()[-1]) if out.strip() else {}
        # A transfer cut off at the end is not an error; a refused connection or a non-2xx is.
        if proc.returncode != 0 and res.get("errors", 1) > 0:
            raise RuntimeError(f"memory workload failed: {err}")
        peak = max(after["VmHWM"], peak_sampled) / 1024
        res.update({"vmhwm_kib": after["VmHWM"], "sampled_peak_rss_kib": peak_sampled,
                    "rss_before_kib": before["VmRSS"]})
        self.raw["memory"] = res
        self.row(f"memory: {self.p.mem_conns} conn downloading a 256 MiB object "
                 f"({res.get('mb_per_s', 0):,.0f} MB/s total)",
                 f"{peak:,.0f} MiB peak RSS", f"{before['VmRSS'] / 1024:,.0f} MiB RSS idle",
                 None, "<= 300 MiB", peak <= 300)

    @staticmethod
    def rss(pid):
        out = {"VmRSS": 0, "VmHWM": 0}
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k = line.split(":")[0]
                if k in out:
                    out[k] = int(line.split()[1])
        return out

    def index_scale(self):
        p = self.p
        stride = 100  # data key j is index j*stride; fillers go right after each of them
        data = ["--bucket", "idx", "--key-prefix", "k", "--count", p.idx_small,
                "--step", stride]
        # The population is not what is measured, so it runs with fsync off (a legitimate,
        # documented config) to fit the time budget.
        self.start_strata(fsync=False)
        self.bench("request", "--method", "PUT", "--path", "/idx")

        def measure(tag):
            # Population ran with fsync off; measure with the benchmark config (fsync on).
            self.start_strata(fsync=True)
            common = ["--connections", 64, "--duration", p.duration, "--warmup", p.warmup,
                      "--random", *data]
            h = self.load(f"HEAD {tag}", "strata", "--method", "HEAD", *common)
            g = self.load(f"GET 1 KiB {tag}", "strata", "--method", "GET", *common)
            return h, g

        t0 = time.time()
        self.bench("populate", "--size", 1024, "--connections", 32, "--threads", self.threads,
                   *data)
        rate = p.idx_small / (time.time() - t0)
        small = p.idx_small
        h_small, g_small = measure("small")

        self.start_strata(fsync=False)
        per_round = p.idx_small
        rounds_goal = max(1, (p.idx_large_goal - small) // per_round)
        filled, t0, rnd = 0, time.time(), 0
        batch = max(1, int(rate * 20 // per_round)) if not p.quick else rounds_goal
        log(f"index: filling up to {p.idx_large_goal:,} objects (0 bytes) within "
            f"{p.fill_budget}s; populate rate so far {rate:,.0f}/s")
        while rnd < rounds_goal and time.time() - t0 < p.fill_budget:
            n = min(batch, rounds_goal - rnd)
            self.bench("populate", "--size", 0, "--connections", 32, "--threads", self.threads,
                       "--bucket", "idx", "--key-prefix", "k", "--count", p.idx_small,
                       "--step", stride, "--suffixes", n, "--suffix-first", rnd)
            rnd += n
            filled += n * per_round
        fill_rate = filled / max(1e-9, time.time() - t0)
        large = small + filled
        self.raw["index"] = {"small": small, "large": large, "fill_rate_per_s": fill_rate,
                             "goal": p.idx_large_goal}
        if large < p.idx_large_goal:
            self.notes.append(
                f"index scale: {large:,} objects instead of {p.idx_large_goal:,} "
                f"(PUT-populating at {fill_rate:,.0f}/s with fsync off fits the "
                f"{p.fill_budget}s budget)")
        h_large, g_large = measure("large")
        scale = f"{small:,} vs {large:,} objects"
        self.ratio_row(f"HEAD, 64 conn, {scale}", h_large, h_small, "req_per_s", 0.8, "req/s",
                       f"{small:,} objects", self.lat(h_large), self.lat(h_small))
        self.ratio_row(f"GET 1 KiB, 64 conn, {scale}", g_large, g_small, "req_per_s", 0.8,
                       "req/s", f"{small:,} objects", self.lat(g_large), self.lat(g_small))

        log("LIST")
        lst = self.bench("list", "--bucket", "idx", "--duration", p.list_duration)
        self.raw["list"] = lst
        self.row(f"LIST 1000 keys/page, {large:,} objects ({lst['pages']} pages)",
                 f"{lst['p50_ms']:.1f} ms/page p50, {lst['p99_ms']:.1f} p99", "-", None,
                 "report", None)

    def lifecycle_lag(self):
        """A lifecycle pass with the same number of due versions in a small and a large
        bucket: the due-time queue keeps its cost flat (in-process, scratch index)."""
        p = self.p
        runs = {}
        for n in (p.lc_small, p.lc_large):
            log(f"lifecycle: {p.lc_due} due among {n:,} objects")
            runs[n] = self.bench("lifecycle", "--objects", n, "--due", p.lc_due, "--dir",
                                 os.path.join(self.work, "lifecycle"))
        small, large = runs[p.lc_small], runs[p.lc_large]
        self.raw["lifecycle"] = runs
        self.ratio_row(f"lifecycle pass, {p.lc_due} versions due, {p.lc_small:,} vs "
                       f"{p.lc_large:,} objects (passes/s)",
                       1.0 / max(large["pass_s"], 1e-6), 1.0 / max(small["pass_s"], 1e-6),
                       None, 0.8, "passes/s", f"{p.lc_small:,} objects",
                       f" ({large['pass_s'] * 1e3:.1f} ms; idle pass "
                       f"{large['idle_pass_s'] * 1e3:.2f} ms; reseed of the bucket "
                       f"{large['first_pass_s']:.1f} s)",
                       f" ({small['pass_s'] * 1e3:.1f} ms)")

    def eviction_policy(self):
        """The hot tier's eviction policy replayed over training epochs (the optimum is C/D)
        and Zipf reads (plain LRU of the same capacity is the baseline)."""
        p = self.p
        runs = {}
        for fraction in (0.1, 0.3, 0.6):
            log(f"eviction policy: {p.cache_objects:,} objects, cache {fraction:.0%} of them")
            runs[fraction] = self.bench("cache", "--objects", p.cache_objects, "--fraction",
                                        fraction, "--zipf-reads", 20 * p.cache_objects)
        self.raw["cache"] = runs
        for fraction, r in runs.items():
            self.ratio_row(f"eviction policy, shuffled epochs 2-4, cache = {fraction:.0%} of "
                           f"the dataset (hit %)", 100 * r["epoch_hit_ratio"],
                           100 * r["optimum"], None, 0.9, "%", "optimum C/D",
                           f" (LRU {100 * r['epoch_hit_ratio_lru']:.1f} %)")
        z = runs[0.3]
        self.ratio_row(f"eviction policy, Zipf s={z['zipf_s']} reads, cache = "
                       f"{z['zipf_capacity_fraction']:.0%} of the objects (hit %)",
                       100 * z["zipf_hit_ratio"], 100 * z["zipf_hit_ratio_lru"], None, 1.0, "%",
                       "LRU")

    def profile_policy(self, paths):
        """With --profile: what deciding on the policy costs, as the inclusive share of
        strata's CPU samples in the functions that do it, during one more (uncounted) run
        with the policy. A share, unlike the req/s ratio, does not drown in the run-to-run
        noise of a 2-core machine. DWARF call graphs: Release keeps no frame pointers."""
        data = os.path.join(self.work, "perf-policy.data")
        self.procs["perf"] = subprocess.Popen(
            ["perf", "record", "-F", "199", "--call-graph", "dwarf,16384", "-o", data,
             "-p", str(self.strata_pid())], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.wrk("hot GET 4 KiB, 20-statement policy, profiled", "strata", self.strata_url,
                 paths, 64)
        self.stop("perf", signal.SIGINT, 120)
        r = subprocess.run(["perf", "report", "-i", data, "--stdio", "--children",
                            "--percent-limit", "0.05", "-g", "none", "--sort", "symbol"],
                           capture_output=True, text=True)
        # The decision (conditions, the policy's evaluation), the parsed policy's lookup
        # outside it, and the bucket record's read (the cache, the copy).
        wanted = ("::AuthorizeBucketAccess", "::PolicyReadsTags", "::RocksIndex::GetBucket")
        shares = {}
        for line in r.stdout.splitlines():
            m = re.match(r"\s*([\d.]+)%\s+([\d.]+)%\s+\[[.k]\]\s+(.*?)(\s+-\s+-)?\s*$", line)
            if not m:
                continue
            name = m.group(3).replace("(anonymous namespace)", "").split("(")[0]
            for suffix in wanted:
                # Not a template instantiated for it (GuardExceptions<...GetBucket...>: the
                # lambda inside); a coroutine split in parts: the parts add up.
                if name.endswith(suffix) and "<" not in name:
                    shares[suffix[2:]] = shares.get(suffix[2:], 0.0) + float(m.group(1))
        self.raw["policy_profile"] = shares
        if shares:
            self.notes.append(
                "perf during a run with the 20-statement policy (inclusive share of strata's "
                "CPU samples): " + ", ".join(f"{n} {v:.2f}%" for n, v in shares.items()))

    def write_profile(self):
        data = os.path.join(self.work, "perf.data")
        r = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children",
                            "--percent-limit", "0.7", "-g", "none", "--sort", "symbol"],
                           capture_output=True, text=True)
        self.profile_text = r.stdout
        samples = re.search(r"^# Samples: (\S+)", r.stdout, re.M)
        top = []
        for line in r.stdout.splitlines():
            m = re.match(r"\s*([\d.]+%)\s+(\[[.k]\])\s+(.*?)\s*(-\s+-)?\s*$", line)
            if m:
                top.append(f"{m.group(1):>7} {m.group(2)} {m.group(3)}")
        self.raw["profile_samples"] = samples.group(1) if samples else "?"
        self.raw["profile_top"] = top[:40]

    # ---- main ---------------------------------------------------------------------------

    # Workloads that start what they need themselves, for --only.
    STANDALONE = {"hot": "hot_path", "cold": "cold_tier", "index": "index_scale",
                  "lifecycle": "lifecycle_lag", "eviction": "eviction_policy",
                  "epoch": "epoch_workload", "restore": "restore_tier",
                  "cluster": "cluster_tier", "policy": "policy_get"}

    def hot_path(self):
        """The request path alone (PUT 4 KiB, hot GET 4 KiB, the 256 MiB PUT and GET, with
        their nginx and fio baselines): `--only hot --bin-dir A` and `--bin-dir B`, run one
        after the other, compare two builds side by side."""
        self.disk_baselines()
        self.start_nginx()
        self.start_strata(fsync=True)
        self.bench("request", "--method", "PUT", "--path", "/bench")
        self.small_objects()
        self.big_objects()

    @staticmethod
    def bench_policy(bucket, statements=20):
        """A policy of `statements` statements as a team might write one: grants to other
        users on their prefixes from an internal network, a Deny of deletes over plain HTTP,
        and the public read of the benchmark's keys from loopback. The owner's GET is
        allowed by the last statement, after every other one was weighed for a Deny."""
        st = [{"Sid": f"team{i}", "Effect": "Allow",
               "Principal": {"AWS": f"arn:aws:iam:::user/user{i}"},
               "Action": ["s3:GetObject", "s3:PutObject", "s3:ListBucket"],
               "Resource": [f"arn:aws:s3:::{bucket}/team{i}/*", f"arn:aws:s3:::{bucket}"],
               "Condition": {"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}}
              for i in range(statements - 2)]
        st.append({"Sid": "no-plain-deletes", "Effect": "Deny", "Principal": "*",
                   "Action": ["s3:DeleteObject", "s3:DeleteObjectVersion"],
                   "Resource": f"arn:aws:s3:::{bucket}/*",
                   "Condition": {"Bool": {"aws:SecureTransport": "false"}}})
        st.append({"Sid": "public-small", "Effect": "Allow", "Principal": "*",
                   "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/small/*",
                   "Condition": {"IpAddress": {"aws:SourceIp": "127.0.0.0/8"}}})
        return json.dumps({"Version": "2012-10-17", "Statement": st})

    def policy_get(self):
        """Hot GET 4 KiB (wrk, 64 conn, presigned) on a bucket with a 20-statement policy
        against the same bucket without one, three runs each in ABBA order on one server after
        a warm-up run, so drift between the runs hits both sides alike."""
        import boto3
        self.start_strata(fsync=True)
        self.bench("request", "--method", "PUT", "--path", "/bench")
        keys = ["--bucket", "bench", "--key-prefix", "small/k", "--count", self.p.small_keys]
        self.bench("populate", "--size", 4096, "--connections", 16, *keys)
        paths = os.path.join(self.work, "policy-paths.txt")
        with open(paths, "w") as f:
            f.write(self.bench("presign", "--expires", 7200, *keys))
        s3 = boto3.client("s3", endpoint_url=self.strata_url, aws_access_key_id=ACCESS,
                          aws_secret_access_key=SECRET, region_name=REGION)
        runs = {"none": [], "policy": []}
        # A first run, not counted: the server's caches and the page cache warm up.
        self.wrk("hot GET 4 KiB, warm-up", "strata", self.strata_url, paths, 64)
        policy = self.bench_policy("bench")
        # ABBA order (none, policy, policy, none, ...): a drift of the machine over the
        # runs weighs on both sides alike.
        for side in ("none", "policy", "policy", "none", "none", "policy"):
            if side == "none":
                s3.delete_bucket_policy(Bucket="bench")
            else:
                s3.put_bucket_policy(Bucket="bench", Policy=policy)
            label = ("hot GET 4 KiB, no policy" if side == "none" else
                     "hot GET 4 KiB, 20-statement policy")
            runs[side].append(self.wrk(label, "strata", self.strata_url, paths, 64))
        self.raw["policy_runs"] = {side: [r["req_per_s"] for r in rs]
                                   for side, rs in runs.items()}
        mean = {side: {"req_per_s": sum(r["req_per_s"] for r in rs) / len(rs),
                       "p50_ms": sum(r["p50_ms"] for r in rs) / len(rs),
                       "p99_ms": sum(r["p99_ms"] for r in rs) / len(rs)}
                for side, rs in runs.items()}
        self.ratio_row("hot GET 4 KiB, 64 conn: a bucket with a 20-statement policy vs none "
                       "(the same server, alternated)", mean["policy"], mean["none"],
                       "req_per_s", 0.95, "req/s", "no policy", self.lat(mean["policy"]),
                       self.lat(mean["none"]))
        if self.args.profile and shutil.which("perf"):
            self.profile_policy(paths)
        s3.delete_bucket_policy(Bucket="bench")  # what follows measures without one

    def run(self):
        started = time.time()
        self.profile_text = ""
        if self.args.only:
            for name in self.args.only.split(","):
                getattr(self, self.STANDALONE[name])()
            self.stop_all()
            self.elapsed = time.time() - started
            return self.report()
        self.micro()
        self.hot_path()
        self.policy_get()
        self.cold_tier()
        self.restore_tier()
        self.memory()
        self.index_scale()
        self.lifecycle_lag()
        self.eviction_policy()
        self.epoch_workload()
        self.cluster_tier()
        self.stop_all()
        self.elapsed = time.time() - started
        return self.report()

    def report(self):
        now = datetime.datetime.now()
        stamp = now.strftime("%Y-%m-%dT%H%M%S")
        machine = machine_info()
        mode = "quick" if self.p.quick else "full"
        lines = [f"# strata benchmark ({mode} run), {now:%Y-%m-%d %H:%M}",
                 "", f"Machine: {machine}. Elapsed: {self.elapsed:.0f} s. "
                 f"Load generators: wrk and strata-bench, {self.threads} threads; strata "
                 f"threads = 0 ({self.threads}), fsync = true; nginx {self.threads} workers.",
                 "", "| workload | strata | baseline | ratio | target | met? |",
                 "|---|---|---|---|---|---|"]
        for r in self.results:
            met = "-" if r["met"] is None else ("yes" if r["met"] else "**no**")
            ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}"
            lines.append(f"| {r['workload']} | {r['strata']} | {r['baseline']} | {ratio} | "
                         f"{r['target']} | {met} |")
        if self.notes:
            lines += ["", "Notes:"] + [f"- {n}" for n in self.notes]
        if self.profile_text:
            lines += ["", "Profile of strata during hot GET 4 KiB (perf, self time, "
                      f"{self.raw['profile_samples']} samples; [k] kernel, [.] user):", "",
                      "```"] + self.raw["profile_top"][:25] + ["```"]
        md = "\n".join(lines) + "\n"
        os.makedirs(self.args.out, exist_ok=True)
        base = os.path.join(self.args.out, f"bench-{stamp}")
        with open(base + ".md", "w") as f:
            f.write(md)
        with open(base + ".json", "w") as f:
            json.dump({"date": now.isoformat(timespec="seconds"), "mode": mode,
                       "machine": machine, "elapsed_s": round(self.elapsed, 1),
                       "rows": self.results, "notes": self.notes, "raw": self.raw}, f, indent=1)
        print(md)
        log(f"wrote {base}.md and {base}.json")
        return 0


def machine_info():
    cores = os.cpu_count()
    distro = ""
    try:
        with open("/etc/os-release") as f:
            distro = dict(l.strip().split("=", 1) for l in f if "=" in l).get(
                "PRETTY_NAME", "").strip('"')
    except OSError:
        pass
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        pass
    return f"{cores} cores ({cpu}), {distro}, Linux {platform.release()}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small counts, short runs (~3 min)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "build", "release", "bin"))
    ap.add_argument("--work-dir", default=os.path.join(ROOT, "build", "bench", "work"),
                    help="servers' data (same filesystem for strata, nginx and fio)")
    ap.add_argument("--profile", action="store_true",
                    help="perf-record strata during hot GET 4 KiB and add the top functions")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--epoch-compute-ms", type=int, default=0,
                    help="the epoch workload's compute time per batch (default 200; 100 quick)")
    ap.add_argument("--only", metavar="NAME[,NAME]",
                    help="run only these standalone workloads: " + ", ".join(Bench.STANDALONE))
    args = ap.parse_args()
    unknown = [n for n in (args.only or "").split(",") if n and n not in Bench.STANDALONE]
    if unknown:
        ap.error(f"--only: unknown workload {', '.join(unknown)}")
    bench = Bench(args)

    def on_signal(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)
    try:
        return bench.run()
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    except Exception as e:  # report what failed, then clean up
        log(f"FAILED: {e}")
        return 1
    finally:
        bench.stop_all()
        if not args.keep:
            shutil.rmtree(bench.work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
