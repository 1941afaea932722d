"""Object operations: PutObject, GetObject, HeadObject, DeleteObject, with boto3 and the
aws CLI, including a 1 GiB object streamed both ways."""
import datetime
import hashlib
import os

import pytest
import requests

from conftest import (aws_clis, make_client, raises_s3, run_aws, sha256_file, sha256_stream,
                      unique_bucket,
                      write_random_file)


def md5_etag(data: bytes) -> str:
    return '"' + hashlib.md5(data).hexdigest() + '"'


def test_put_get_head_delete(s3, bucket):
    body = b"hello, strata\n" * 100
    put = s3.put_object(Bucket=bucket, Key="dir/hello.txt", Body=body)
    assert put["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert put["ETag"] == md5_etag(body)

    got = s3.get_object(Bucket=bucket, Key="dir/hello.txt")
    assert got["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert got["Body"].read() == body
    assert got["ETag"] == md5_etag(body)
    assert got["ContentLength"] == len(body)

    head = s3.head_object(Bucket=bucket, Key="dir/hello.txt")
    assert head["ContentLength"] == len(body)
    assert head["ETag"] == md5_etag(body)
    assert isinstance(head["LastModified"], datetime.datetime)
    now = datetime.datetime.now(datetime.timezone.utc)
    assert abs((now - head["LastModified"]).total_seconds()) < 300

    assert s3.delete_object(Bucket=bucket, Key="dir/hello.txt")[
        "ResponseMetadata"]["HTTPStatusCode"] == 204
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket=bucket, Key="dir/hello.txt")
    with raises_s3("404", 404):
        s3.head_object(Bucket=bucket, Key="dir/hello.txt")


def test_content_type_and_user_metadata(s3, bucket):
    meta = {"purpose": "e2e", "owner-name": "Strata Test"}
    s3.put_object(Bucket=bucket, Key="m", Body=b"{}", ContentType="application/json",
                  Metadata=meta, CacheControl="max-age=60",
                  ContentDisposition='attachment; filename="m.json"')
    for resp in (s3.head_object(Bucket=bucket, Key="m"), s3.get_object(Bucket=bucket, Key="m")):
        assert resp["ContentType"] == "application/json"
        assert resp["Metadata"] == meta
        assert resp.get("CacheControl") == "max-age=60"
        assert resp.get("ContentDisposition") == 'attachment; filename="m.json"'


def test_default_content_type(s3, bucket):
    # boto3 sends no Content-Type for bytes bodies; S3 stores binary/octet-stream.
    s3.put_object(Bucket=bucket, Key="plain", Body=b"x")
    assert s3.head_object(Bucket=bucket, Key="plain")["ContentType"] in (
        "binary/octet-stream", "application/octet-stream")


def test_last_modified_header_format(s3, bucket, presign):
    s3.put_object(Bucket=bucket, Key="lm", Body=b"x")
    r = requests.get(presign("GET", bucket, "lm"), timeout=30)
    assert r.status_code == 200
    # RFC 7231 IMF-fixdate, e.g. "Wed, 12 Oct 2009 17:50:00 GMT".
    datetime.datetime.strptime(r.headers["Last-Modified"], "%a, %d %b %Y %H:%M:%S GMT")
    assert r.headers["ETag"] == md5_etag(b"x")
    assert r.headers.get("x-amz-request-id")


def test_no_such_key_xml(s3, bucket, presign):
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket=bucket, Key="does/not/exist")
    r = requests.get(presign("GET", bucket, "does/not/exist"), timeout=30)
    assert r.status_code == 404
    assert "<Code>NoSuchKey</Code>" in r.text
    assert "<Key>does/not/exist</Key>" in r.text
    assert r.headers["Content-Type"].startswith("application/xml")


def test_delete_is_idempotent(s3, bucket):
    for _ in range(2):
        resp = s3.delete_object(Bucket=bucket, Key="never-existed")
        assert resp["ResponseMetadata"]["HTTPStatusCode"] == 204


def test_overwrite(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"first", Metadata={"v": "1"})
    s3.put_object(Bucket=bucket, Key="k", Body=b"second version", Metadata={"v": "2"})
    got = s3.get_object(Bucket=bucket, Key="k")
    assert got["Body"].read() == b"second version"
    assert got["Metadata"] == {"v": "2"}
    assert got["ETag"] == md5_etag(b"second version")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]
    assert keys == ["k"]


def test_zero_byte_object(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="empty", Body=b"")
    assert put["ETag"] == '"d41d8cd98f00b204e9800998ecf8427e"'
    got = s3.get_object(Bucket=bucket, Key="empty")
    assert got["ContentLength"] == 0
    assert got["Body"].read() == b""
    assert s3.head_object(Bucket=bucket, Key="empty")["ContentLength"] == 0


@pytest.mark.parametrize("key", [
    "with space.txt", "unicodé/ключ/鍵", "a+b=c&d", "semi;colon", "percent%20literal",
    "deep/" * 20 + "leaf", "tilde~and'quote", "!*()$@,",
])
def test_awkward_keys(s3, bucket, key):
    s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == key.encode()
    listed = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]
    assert key in listed
    s3.delete_object(Bucket=bucket, Key=key)
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket=bucket, Key=key)


def test_key_too_long(s3, bucket):
    with raises_s3("KeyTooLongError", 400):
        s3.put_object(Bucket=bucket, Key="k" * 1025, Body=b"x")


def test_bad_content_md5(s3, bucket):
    import base64
    wrong = base64.b64encode(hashlib.md5(b"something else").digest()).decode()
    with raises_s3("BadDigest", 400):
        s3.put_object(Bucket=bucket, Key="md5", Body=b"payload", ContentMD5=wrong)
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket=bucket, Key="md5")
    right = base64.b64encode(hashlib.md5(b"payload").digest()).decode()
    s3.put_object(Bucket=bucket, Key="md5", Body=b"payload", ContentMD5=right)


def test_medium_object_streamed(s3, bucket, tmp_path):
    path = tmp_path / "medium.bin"
    sha, md5 = write_random_file(path, 40 * 1024 * 1024 + 7)
    with open(path, "rb") as f:
        put = s3.put_object(Bucket=bucket, Key="medium", Body=f)
    assert put["ETag"] == f'"{md5}"'
    got = s3.get_object(Bucket=bucket, Key="medium")
    assert sha256_stream(got["Body"]) == (sha, 40 * 1024 * 1024 + 7)


@pytest.fixture(scope="module")
def gib_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("big") / "one-gib.bin"
    sha, md5 = write_random_file(path, 1 << 30)
    yield path, sha, md5
    path.unlink(missing_ok=True)


def memory_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"{field} not in /proc/{pid}/status")


@pytest.mark.big
def test_one_gib_boto3(strata_factory, gib_file, tmp_path):
    # A server of its own, so its peak memory reflects this transfer alone.
    srv = strata_factory()
    s3 = make_client(srv)
    bucket = unique_bucket()
    s3.create_bucket(Bucket=bucket)
    rss_before = memory_kib(srv.proc.pid, "VmRSS")
    path, sha, md5 = gib_file
    with open(path, "rb") as f:
        put = s3.put_object(Bucket=bucket, Key="one-gib", Body=f)
    assert put["ETag"] == f'"{md5}"'
    head = s3.head_object(Bucket=bucket, Key="one-gib")
    assert head["ContentLength"] == 1 << 30
    got = s3.get_object(Bucket=bucket, Key="one-gib")
    assert got["ContentLength"] == 1 << 30
    out = tmp_path / "down.bin"
    assert sha256_stream(got["Body"], out_path=out) == (sha, 1 << 30)
    out.unlink()
    # Bodies stream through fixed buffers: a GiB in and out must not grow the server by
    # anything near the object's size (the bound leaves room for ASan's bookkeeping).
    growth_mib = (memory_kib(srv.proc.pid, "VmHWM") - rss_before) / 1024
    assert growth_mib < 128, f"peak RSS grew by {growth_mib:.0f} MiB for a 1 GiB object"
    s3.delete_object(Bucket=bucket, Key="one-gib")


@pytest.mark.big
@pytest.mark.parametrize("cli", aws_clis())
def test_one_gib_aws_cli(server, s3, bucket, gib_file, tmp_path, cli):
    path, sha, md5 = gib_file
    run_aws(cli, server, ["s3", "cp", str(path), f"s3://{bucket}/cli-one-gib"], tmp_path)
    head = s3.head_object(Bucket=bucket, Key="cli-one-gib")
    assert head["ContentLength"] == 1 << 30
    assert head["ETag"] == f'"{md5}"'
    out = tmp_path / "cli-down.bin"
    run_aws(cli, server, ["s3", "cp", f"s3://{bucket}/cli-one-gib", str(out)], tmp_path)
    assert os.path.getsize(out) == 1 << 30
    assert sha256_file(out) == sha
    out.unlink()
    s3.delete_object(Bucket=bucket, Key="cli-one-gib")


@pytest.mark.parametrize("cli", aws_clis())
def test_aws_cli_small(server, s3, bucket, tmp_path, cli):
    src = tmp_path / "small.bin"
    sha, _ = write_random_file(src, 3 * 1024 * 1024 + 1)
    run_aws(cli, server, ["s3", "cp", str(src), f"s3://{bucket}/dir/small.bin"], tmp_path)
    ls = run_aws(cli, server, ["s3", "ls", f"s3://{bucket}/dir/"], tmp_path)
    assert "small.bin" in ls.stdout and str(3 * 1024 * 1024 + 1) in ls.stdout
    buckets = run_aws(cli, server, ["s3", "ls"], tmp_path)
    assert bucket in buckets.stdout
    out = tmp_path / "back.bin"
    run_aws(cli, server, ["s3", "cp", f"s3://{bucket}/dir/small.bin", str(out)], tmp_path)
    assert sha256_file(out) == sha
    run_aws(cli, server, ["s3", "rm", f"s3://{bucket}/dir/small.bin"], tmp_path)
    with raises_s3("404", 404):
        s3.head_object(Bucket=bucket, Key="dir/small.bin")
    missing = run_aws(cli, server, ["s3", "cp", f"s3://{bucket}/nope", str(tmp_path / "x")],
                      tmp_path, check=False)
    assert missing.returncode != 0
    assert "404" in missing.stderr or "Not Found" in missing.stderr
