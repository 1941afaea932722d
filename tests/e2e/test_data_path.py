"""The data path of local tier files: io_uring by default (where the kernel allows it),
pread/pwrite with `server.io_uring = false`. Both move the same bytes: PUT, GET, range
GET, multipart and ?partNumber round trips byte-exact, and damaged chunks refused.
The rest of the suite runs on the default (io_uring) path."""
import hashlib
import http.client
import os
import time
import urllib.parse
import urllib.request

import pytest

from conftest import make_client

import require

MiB = 1 << 20


def data_path_line(srv):
    for line in srv.logs().splitlines():
        if "storage: data path:" in line:
            return line
    return None


def test_default_server_uses_io_uring(server):
    line = data_path_line(server)
    assert line is not None, server.logs()
    if "io_uring unavailable" in line:
        require.missing(f"this kernel refuses io_uring: {line}",
                        "CI needs a kernel that allows it: sysctl kernel.io_uring_disabled=0 "
                        "and no seccomp filter on io_uring_setup")
    assert "storage: data path: io_uring" in line, line


def test_io_uring_false_uses_pread(strata_factory):
    srv = strata_factory(overrides={"server": {"io_uring": False}})
    line = data_path_line(srv)
    assert line is not None and "pread/pwrite (server.io_uring = false)" in line, srv.logs()


@pytest.mark.parametrize("io_uring", [True, False], ids=["io_uring", "pread"])
def test_round_trips_byte_exact(strata_factory, io_uring):
    srv = strata_factory(overrides={"server": {"io_uring": io_uring}})
    s3 = make_client(srv)
    s3.create_bucket(Bucket="paths")

    objects = {}
    for size in (0, 1, 4096, 256 * 1024 + 1, MiB + 1, 3 * MiB + 123):
        key = f"obj-{size}"
        objects[key] = os.urandom(size)
        s3.put_object(Bucket="paths", Key=key, Body=objects[key])
    for key, body in objects.items():
        got = s3.get_object(Bucket="paths", Key=key)["Body"].read()
        assert got == body, key

    big = objects[f"obj-{3 * MiB + 123}"]
    for first, last in [(0, 0), (MiB - 5, MiB + 5), (100, 2 * MiB + 100),
                        (len(big) - 10, len(big) - 1), (3 * MiB, len(big) - 1)]:
        got = s3.get_object(Bucket="paths", Key=f"obj-{3 * MiB + 123}",
                            Range=f"bytes={first}-{last}")["Body"].read()
        assert got == big[first:last + 1], (first, last)

    parts = [os.urandom(5 * MiB + 3), os.urandom(MiB + 7)]
    upload = s3.create_multipart_upload(Bucket="paths", Key="mp")["UploadId"]
    etags = []
    for n, part in enumerate(parts, 1):
        r = s3.upload_part(Bucket="paths", Key="mp", UploadId=upload, PartNumber=n, Body=part)
        etags.append({"PartNumber": n, "ETag": r["ETag"]})
    s3.complete_multipart_upload(Bucket="paths", Key="mp", UploadId=upload,
                                 MultipartUpload={"Parts": etags})
    whole = b"".join(parts)
    assert s3.get_object(Bucket="paths", Key="mp")["Body"].read() == whole
    first, last = len(parts[0]) - 1000, len(parts[0]) + 1000  # across the part boundary
    got = s3.get_object(Bucket="paths", Key="mp", Range=f"bytes={first}-{last}")["Body"].read()
    assert got == whole[first:last + 1]
    for n, part in enumerate(parts, 1):
        assert s3.get_object(Bucket="paths", Key="mp", PartNumber=n)["Body"].read() == part


@pytest.mark.parametrize("io_uring", [True, False], ids=["io_uring", "pread"])
def test_damaged_chunk_is_refused(strata_factory, io_uring):
    srv = strata_factory(overrides={"server": {"io_uring": io_uring}})
    s3 = make_client(srv)
    s3.create_bucket(Bucket="paths")
    body = os.urandom(2 * MiB + 10)
    s3.put_object(Bucket="paths", Key="k", Body=body)
    base = srv.workdir / "data"  # <data_dir>/<tier>/data/<xx>/<id>
    files = [os.path.join(root, n) for root, _, names in os.walk(base)
             if os.path.relpath(root, base).split(os.sep)[1:2] == ["data"] for n in names]
    assert len(files) == 1, files
    with open(files[0], "r+b") as f:
        f.seek(MiB + 100)  # chunk 1
        b = f.read(1)
        f.seek(MiB + 100)
        f.write(bytes([b[0] ^ 0xFF]))
    got = s3.get_object(Bucket="paths", Key="k", Range=f"bytes=0-{MiB - 1}")["Body"].read()
    assert got == body[:MiB]
    try:
        bad = s3.get_object(Bucket="paths", Key="k", Range=f"bytes={MiB}-{MiB + 200}")
        served = bad["Body"].read()
    except Exception:  # noqa: BLE001 - a cut connection surfaces as several types
        served = None
    assert served != body[MiB:MiB + 201]
    assert "CRC64NVME mismatch" in srv.logs()


def send_block_bytes(srv):
    with urllib.request.urlopen(srv.endpoint + "/metrics", timeout=30) as resp:
        for line in resp.read().decode().splitlines():
            if line.startswith("strata_get_send_block_bytes "):
                return float(line.split()[1])
    raise AssertionError("no strata_get_send_block_bytes in /metrics")


def test_many_stalled_downloads_share_a_bounded_send_budget(strata_factory):
    # Each core lends its GETs at most 32 MiB of send blocks; 160 downloads that all stall
    # (requests sent, bodies not read yet) would hold 80 MiB in pairs of 256 KiB blocks,
    # so on 2 cores the later GETs run on one 64 KiB block. Every body must still arrive
    # whole, and the blocks held must stay within the budget and return to 0.
    cores = 2
    srv = strata_factory(overrides={"server": {"threads": cores}})
    s3 = make_client(srv)
    s3.create_bucket(Bucket="budget")
    body = os.urandom(12 * MiB + 5)
    s3.put_object(Bucket="budget", Key="big", Body=body)
    url = urllib.parse.urlsplit(s3.generate_presigned_url(
        "get_object", Params={"Bucket": "budget", "Key": "big"}, ExpiresIn=600))
    target = f"{url.path}?{url.query}"
    conns = []
    try:
        for _ in range(160):
            conn = http.client.HTTPConnection(srv.host, srv.port, timeout=120)
            conn.request("GET", target)
            conns.append(conn)
        held = 0.0
        for _ in range(50):  # until every GET has started sending (and stalled)
            held = send_block_bytes(srv)
            if held >= cores * 32 * MiB:
                break
            time.sleep(0.1)
        # Past the budget only 64 KiB blocks are added: at most one per GET beyond it.
        assert cores * 16 * MiB < held <= cores * (32 * MiB + 256 * 1024) + 160 * 64 * 1024, held
        want = hashlib.sha256(body).hexdigest()
        for i, conn in enumerate(conns):
            resp = conn.getresponse()
            assert resp.status == 200, (i, resp.status)
            digest = hashlib.sha256()
            while chunk := resp.read(1 << 20):
                digest.update(chunk)
            assert digest.hexdigest() == want, i
    finally:
        for conn in conns:
            conn.close()
    # A GET lets go of its blocks just after its last bytes leave.
    deadline = time.monotonic() + 10
    while send_block_bytes(srv) != 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert send_block_bytes(srv) == 0
