"""rclone (Debian's /usr/bin/rclone) against strata: copy of a dataset-like tree, check,
sync after local changes, lsf and size, and a multipart upload read back bit for bit."""
import hashlib
import json
import os
import random
import subprocess

import pytest

from conftest import listed_sizes, sha256_file, tree_digests, write_random_file, write_tree

import require

# Debian's rclone (scripts/deps.sh --test); STRATA_E2E_RCLONE names another one.
RCLONE = os.environ.get("STRATA_E2E_RCLONE", "/usr/bin/rclone")


@pytest.fixture(autouse=True)
def _rclone_installed():
    """Skips every test here when rclone is missing, or fails it with CI=true."""
    require.require_tool("rclone", path=RCLONE, package="rclone")


def rclone(srv, *args, timeout=600, check=True):
    """Runs rclone with the remote `strata:` defined purely by environment and flags."""
    # rclone refuses to start (LoadCustomCABundleError) when AWS_CA_BUNDLE names a bundle
    # it cannot use for a plain-HTTP endpoint, so no *_CA_BUNDLE reaches it; no user config
    # or AWS_* profile may change what the test runs either.
    env = {k: v for k, v in os.environ.items()
           if not k.endswith("_CA_BUNDLE") and not k.startswith(("AWS_", "RCLONE_"))}
    env.update({
        "TZ": "UTC",  # lsf prints modification times in local time
        "RCLONE_CONFIG": os.devnull,
        "RCLONE_CONFIG_STRATA_TYPE": "s3",
        "RCLONE_CONFIG_STRATA_PROVIDER": "Other",
        "RCLONE_CONFIG_STRATA_ACCESS_KEY_ID": srv.access_key,
        "RCLONE_CONFIG_STRATA_SECRET_ACCESS_KEY": srv.secret_key,
    })
    # One try at every level: a retry would hide the failing request the test is about.
    cmd = [RCLONE, "--s3-endpoint", srv.endpoint, "--s3-region", srv.region,
           "--s3-force-path-style", "--retries", "1", "--low-level-retries", "1", "-vv",
           *args]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and res.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} exited {res.returncode}\nstdout:\n{res.stdout[-5000:]}\n"
                    f"stderr (last 20000 chars):\n{res.stderr[-20000:]}")
    return res


def remote_matches(srv, s3, bucket, prefix, local_root):
    """Asserts that bucket/prefix holds exactly the files under local_root, by rclone's
    check (sizes and MD5s), by rclone lsf and size, and by boto3's listing."""
    local = {p.relative_to(local_root).as_posix(): p.stat().st_size
             for p in local_root.rglob("*") if p.is_file()}
    assert local, "the local tree is empty: nothing would be compared"
    check = rclone(srv, "check", str(local_root), f"strata:{bucket}/{prefix}")
    assert "0 differences found" in check.stderr, check.stderr[-5000:]

    lsf = rclone(srv, "lsf", "-R", "--files-only", "--format", "ps", "--separator", "\t",
                 f"strata:{bucket}/{prefix}")
    listed = dict(line.rsplit("\t", 1) for line in lsf.stdout.splitlines())
    assert {k: int(v) for k, v in listed.items()} == local

    size = json.loads(rclone(srv, "size", "--json", f"strata:{bucket}/{prefix}").stdout)
    assert (size["count"], size["bytes"]) == (len(local), sum(local.values()))

    assert listed_sizes(s3, bucket, prefix + "/") == {f"{prefix}/{k}": v
                                                      for k, v in local.items()}


def test_rclone_copy_check_lsf_size(server, s3, bucket, tmp_path):
    src = tmp_path / "src"
    files = write_tree(src, random.Random(1))
    rclone(server, "copy", str(src), f"strata:{bucket}/data")
    remote_matches(server, s3, bucket, "data", src)
    # Bytes, not just sizes and ETags, for the names that URL handling gets wrong.
    for rel, sha in files.items():
        if rel.startswith("names/"):
            body = s3.get_object(Bucket=bucket, Key=f"data/{rel}")["Body"].read()
            assert hashlib.sha256(body).hexdigest() == sha, rel


def test_rclone_sync_makes_remote_match(server, s3, bucket, tmp_path):
    rng = random.Random(2)
    src = tmp_path / "src"
    files = sorted(write_tree(src, rng, small_files=60, mib_files=1))
    rclone(server, "copy", str(src), f"strata:{bucket}/data")
    remote_matches(server, s3, bucket, "data", src)

    # Every change alters the bytes: rewriting identical bytes would only move the mtime,
    # which rclone updates with CopyObject (test_rclone_sync_of_touched_file below).
    nonempty = [rel for rel in files if (src / rel).stat().st_size > 0]
    for rel in nonempty[0:10]:    # same size, new bytes: only MD5 tells them apart
        path = src / rel
        path.write_bytes(rng.randbytes(path.stat().st_size))
    for rel in nonempty[10:15]:   # new size
        path = src / rel
        path.write_bytes(rng.randbytes(path.stat().st_size + rng.randint(1, 9000)))
    for rel in nonempty[15:25] + [f for f in files if f.startswith("empty/")][:2]:
        (src / rel).unlink()
    for i in range(10):
        new = src / "added" / f"deeper {i % 3}" / f"new-ü-{i}.bin"
        new.parent.mkdir(parents=True, exist_ok=True)
        new.write_bytes(rng.randbytes(rng.randint(0, 5000)))

    rclone(server, "sync", str(src), f"strata:{bucket}/data")
    remote_matches(server, s3, bucket, "data", src)
    down = tmp_path / "down"
    rclone(server, "copy", f"strata:{bucket}/data", str(down))
    assert tree_digests(down) == tree_digests(src)


def test_rclone_sync_of_touched_file(server, s3, bucket, tmp_path):
    # Same bytes, newer mtime: rclone keeps the object and rewrites only its metadata
    # (X-Amz-Meta-Mtime) with a CopyObject of the object onto itself, REPLACE directive.
    src = tmp_path / "src"
    src.mkdir()
    path = src / "touched.bin"
    data = os.urandom(3000)
    path.write_bytes(data)
    os.utime(path, (1_600_000_000, 1_600_000_000))
    rclone(server, "copy", str(src), f"strata:{bucket}/t")
    os.utime(path, (1_700_000_000.25, 1_700_000_000.25))
    rclone(server, "sync", str(src), f"strata:{bucket}/t")

    lsf = rclone(server, "lsf", "--format", "tp", "--separator", "\t", f"strata:{bucket}/t")
    assert lsf.stdout.split("\t")[0].startswith("2023-11-14 22:13:20"), lsf.stdout
    got = s3.get_object(Bucket=bucket, Key="t/touched.bin")
    assert got["Body"].read() == data
    assert float(got["Metadata"]["mtime"]) == pytest.approx(1_700_000_000.25)


def test_rclone_multipart_upload(server, s3, bucket, tmp_path):
    part = 5 * 1024 * 1024
    size = 17 * 1024 * 1024 + 12345   # four parts: 5, 5, 5 and a short last one
    src = tmp_path / "up"
    src.mkdir()
    big = src / "checkpoint.bin"
    sha, _ = write_random_file(big, size)
    rclone(server, "copy", "--s3-upload-cutoff", "5M", "--s3-chunk-size", "5M", str(src),
           f"strata:{bucket}/mp")

    head = s3.head_object(Bucket=bucket, Key="mp/checkpoint.bin")
    assert head["ContentLength"] == size
    # S3's multipart ETag: the MD5 of the parts' binary MD5s, then "-<number of parts>".
    with open(big, "rb") as f:
        digests = b"".join(hashlib.md5(chunk).digest() for chunk in iter(lambda: f.read(part), b""))
    assert head["ETag"] == f'"{hashlib.md5(digests).hexdigest()}-4"'

    check = rclone(server, "check", str(src), f"strata:{bucket}/mp")
    assert "0 differences found" in check.stderr, check.stderr[-5000:]
    down = tmp_path / "down"
    rclone(server, "copy", f"strata:{bucket}/mp", str(down))
    assert os.path.getsize(down / "checkpoint.bin") == size
    assert sha256_file(down / "checkpoint.bin") == sha
