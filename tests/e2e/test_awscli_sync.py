"""The aws CLI's high-level `s3` commands, v1 and v2: multipart cp both ways, sync of a tree
up, after changes (with --delete) and back down, ls with and without --recursive over more
than one listing page, and rm --recursive."""
import concurrent.futures
import hashlib
import os
import random
import re
import time

import pytest

from conftest import (aws_clis, listed_sizes, run_aws, sha256_file, tree_digests,
                      write_random_file, write_tree)

MIB = 1024 * 1024


@pytest.mark.parametrize("cli", aws_clis())
def test_aws_cp_multipart_both_ways(server, s3, bucket, tmp_path, cli):
    size = 40 * MIB + 1   # five 8 MiB parts and a last part of one byte
    src = tmp_path / "forty.bin"
    sha, _ = write_random_file(src, size)
    mp = {"multipart_threshold": "8MB", "multipart_chunksize": "8MB"}
    run_aws(cli, server, ["s3", "cp", str(src), f"s3://{bucket}/mp/forty.bin"], tmp_path, **mp)

    head = s3.head_object(Bucket=bucket, Key="mp/forty.bin")
    assert head["ContentLength"] == size
    # S3's multipart ETag: the MD5 of the parts' binary MD5s, then "-<number of parts>".
    with open(src, "rb") as f:
        digests = b"".join(hashlib.md5(c).digest() for c in iter(lambda: f.read(8 * MIB), b""))
    assert head["ETag"] == f'"{hashlib.md5(digests).hexdigest()}-6"'

    # Downloads above the threshold are ranged GETs in parallel, reassembled by the CLI.
    out = tmp_path / "back.bin"
    run_aws(cli, server, ["s3", "cp", f"s3://{bucket}/mp/forty.bin", str(out)], tmp_path, **mp)
    assert os.path.getsize(out) == size
    assert sha256_file(out) == sha


@pytest.mark.parametrize("cli", aws_clis())
def test_aws_sync_up_change_delete_and_down(server, s3, bucket, tmp_path, cli):
    rng = random.Random(4)
    src = tmp_path / "src"
    files = sorted(write_tree(src, rng, small_files=120, mib_files=2))
    dest = f"s3://{bucket}/tree"
    run_aws(cli, server, ["s3", "sync", str(src), dest], tmp_path)
    assert listed_sizes(s3, bucket, "tree/") == {
        f"tree/{rel}": (src / rel).stat().st_size for rel in files}

    # sync uploads what differs in size or is newer than the object: let a second pass so
    # the rewritten files are strictly newer than their uploads.
    time.sleep(1.1)
    for rel in files[0:8]:
        path = src / rel
        path.write_bytes(rng.randbytes(path.stat().st_size))          # same size
    for rel in files[8:14]:
        path = src / rel
        path.write_bytes(rng.randbytes(path.stat().st_size + 1 + rng.randint(0, 3000)))
    for rel in files[14:30]:
        (src / rel).unlink()
    for i in range(6):
        new = src / "new dir ü" / f"n{i}.bin"
        new.parent.mkdir(exist_ok=True)
        new.write_bytes(rng.randbytes(rng.randint(0, 4000)))
    run_aws(cli, server, ["s3", "sync", "--delete", str(src), dest], tmp_path)

    want = tree_digests(src)
    assert listed_sizes(s3, bucket, "tree/") == {
        f"tree/{rel}": (src / rel).stat().st_size for rel in want}
    down = tmp_path / "down"
    run_aws(cli, server, ["s3", "sync", dest, str(down)], tmp_path)
    assert tree_digests(down) == want


def put_many(s3, bucket, keys):
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda k: s3.put_object(Bucket=bucket, Key=k, Body=k.encode()), keys))


def parse_ls(stdout):
    """`aws s3 ls` lines: ({prefix, ...}, {key: size})."""
    prefixes, objects = set(), {}
    for line in stdout.splitlines():
        if m := re.fullmatch(r"\s*PRE (.+)", line):
            prefixes.add(m.group(1))
        elif m := re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+(\d+) (.+)", line):
            objects[m.group(2)] = int(m.group(1))
        elif line.strip():
            raise AssertionError(f"unexpected `aws s3 ls` line: {line!r}")
    return prefixes, objects


@pytest.mark.parametrize("cli", aws_clis())
def test_aws_ls_and_rm_recursive(server, s3, bucket, tmp_path, cli):
    # More than 1000 keys, so both ls --recursive and rm --recursive (DeleteObjects takes
    # 1000 keys at a time) need a second page.
    many = [f"many/k{i:04d}" for i in range(1005)]
    other = ["top.txt", "other/a b.txt", "other/sub/ü.txt"]
    put_many(s3, bucket, many + other)

    prefixes, objects = parse_ls(run_aws(cli, server, ["s3", "ls", f"s3://{bucket}/"],
                                         tmp_path).stdout)
    assert (prefixes, objects) == ({"many/", "other/"}, {"top.txt": 7})
    prefixes, objects = parse_ls(run_aws(cli, server, ["s3", "ls", f"s3://{bucket}/other/"],
                                         tmp_path).stdout)
    assert (prefixes, objects) == ({"sub/"}, {"a b.txt": len("other/a b.txt")})
    _, objects = parse_ls(run_aws(cli, server, ["s3", "ls", "--recursive", f"s3://{bucket}"],
                                  tmp_path).stdout)
    assert objects == {k: len(k.encode()) for k in many + other}

    rm = run_aws(cli, server, ["s3", "rm", "--recursive", f"s3://{bucket}/many/"], tmp_path)
    assert rm.stdout.count("delete: ") == len(many), rm.stdout[-2000:]
    assert listed_sizes(s3, bucket) == {k: len(k.encode()) for k in other}
    run_aws(cli, server, ["s3", "rm", "--recursive", f"s3://{bucket}"], tmp_path)
    assert listed_sizes(s3, bucket) == {}
    assert run_aws(cli, server, ["s3", "ls", "--recursive", f"s3://{bucket}"],
                   tmp_path).stdout.strip() == ""


def test_empty_put_then_put_on_one_connection(server, s3, bucket):
    # botocore (the aws CLI's engine, v1 and v2) sends `Expect: 100-continue` even with an
    # empty body. If the server answers that PUT without a `100 Continue` first (which RFC
    # 9110 allows), botocore keeps the final status on the pooled connection and misreads
    # the next PUT's response: it waits for the server's idle timeout (60s) and returns a
    # response without headers. `aws s3 sync` of a tree with empty files stalls this way.
    # S3 sends `100 Continue` for empty bodies too, so clients never take this path.
    started = time.monotonic()
    assert s3.put_object(Bucket=bucket, Key="empty", Body=b"")["ETag"] == \
        '"d41d8cd98f00b204e9800998ecf8427e"'
    put = s3.put_object(Bucket=bucket, Key="after-empty", Body=b"x" * 1000)
    elapsed = time.monotonic() - started
    assert put.get("ETag") == f'"{hashlib.md5(b"x" * 1000).hexdigest()}"', put
    assert elapsed < 10, f"two small PUTs took {elapsed:.0f}s"
