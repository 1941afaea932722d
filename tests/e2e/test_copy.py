"""CopyObject: within and across buckets, metadata and tagging directives, the
copy-onto-itself rule, x-amz-copy-source-if-*, access to the source, and that a copy
shares the source's bytes on disk instead of duplicating them (what makes a client's
rename of a large object instant)."""
import datetime
import hashlib
import os
import time

import boto3.s3.transfer
import pytest

from conftest import raises_s3, unique_bucket

MiB = 1 << 20


def data_files(srv):
    """(path, inode, links, bytes) of every data file of the server's hot tier."""
    out = []
    base = srv.workdir / "data"
    for root, _, names in os.walk(base):
        # <data_dir>/<tier>/data/<xx>/<id>; <tier>/tmp holds writes in progress.
        if os.path.relpath(root, base).split(os.sep)[1:2] != ["data"]:
            continue
        for name in names:
            st = os.stat(os.path.join(root, name))
            out.append((name, st.st_ino, st.st_nlink, st.st_size))
    return out


@pytest.mark.boto3
def test_copy_keeps_bytes_and_metadata(s3, bucket):
    body = os.urandom(100_000)
    s3.put_object(Bucket=bucket, Key="src", Body=body, ContentType="text/x-src",
                  Metadata={"a": "1"}, CacheControl="max-age=5")
    resp = s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src"})
    assert resp["CopyObjectResult"]["ETag"] == f'"{hashlib.md5(body).hexdigest()}"'
    got = s3.get_object(Bucket=bucket, Key="dst")
    assert got["Body"].read() == body
    assert (got["ContentType"], got["Metadata"], got["CacheControl"]) == (
        "text/x-src", {"a": "1"}, "max-age=5")


@pytest.mark.boto3
def test_copy_replace_metadata_and_other_bucket(s3, bucket):
    other = unique_bucket()
    s3.create_bucket(Bucket=other)
    try:
        s3.put_object(Bucket=bucket, Key="src", Body=b"payload", Metadata={"a": "1"})
        s3.copy_object(Bucket=other, Key="x/y", CopySource={"Bucket": bucket, "Key": "src"},
                       MetadataDirective="REPLACE", Metadata={"b": "2"}, ContentType="text/plain")
        got = s3.get_object(Bucket=other, Key="x/y")
        assert got["Body"].read() == b"payload"
        assert got["Metadata"] == {"b": "2"} and got["ContentType"] == "text/plain"
    finally:
        s3.delete_object(Bucket=other, Key="x/y")
        s3.delete_bucket(Bucket=other)


@pytest.mark.boto3
def test_copy_onto_itself(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"v", Metadata={"a": "1"})
    with raises_s3("InvalidRequest", 400):
        s3.copy_object(Bucket=bucket, Key="k", CopySource={"Bucket": bucket, "Key": "k"})
    s3.copy_object(Bucket=bucket, Key="k", CopySource={"Bucket": bucket, "Key": "k"},
                   MetadataDirective="REPLACE", Metadata={"a": "2"})
    got = s3.get_object(Bucket=bucket, Key="k")
    assert got["Body"].read() == b"v" and got["Metadata"] == {"a": "2"}


@pytest.mark.boto3
def test_copy_source_conditions(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="src", Body=b"v")
    src = {"Bucket": bucket, "Key": "src"}
    s3.copy_object(Bucket=bucket, Key="d1", CopySource=src, CopySourceIfMatch=put["ETag"])
    with raises_s3("PreconditionFailed", 412):
        s3.copy_object(Bucket=bucket, Key="d2", CopySource=src, CopySourceIfMatch='"nope"')
    with raises_s3("PreconditionFailed", 412):
        s3.copy_object(Bucket=bucket, Key="d2", CopySource=src, CopySourceIfNoneMatch=put["ETag"])
    future = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)
    with raises_s3("PreconditionFailed", 412):
        s3.copy_object(Bucket=bucket, Key="d2", CopySource=src, CopySourceIfModifiedSince=future)
    past = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
    with raises_s3("PreconditionFailed", 412):
        s3.copy_object(Bucket=bucket, Key="d2", CopySource=src, CopySourceIfUnmodifiedSince=past)
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket=bucket, Key="d2")


@pytest.mark.boto3
def test_copy_source_errors(s3, s3_other, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"v")
    with raises_s3("NoSuchKey", 404):
        s3.copy_object(Bucket=bucket, Key="d", CopySource={"Bucket": bucket, "Key": "missing"})
    with raises_s3("NoSuchBucket", 404):
        s3.copy_object(Bucket=bucket, Key="d", CopySource={"Bucket": unique_bucket(), "Key": "k"})
    with raises_s3("InvalidArgument", 400):
        s3.copy_object(Bucket=bucket, Key="d", CopySource=f"{bucket}")
    with raises_s3("InvalidArgument", 400):
        s3.copy_object(Bucket=bucket, Key="d", CopySource={"Bucket": bucket, "Key": "src"},
                       MetadataDirective="MOVE")
    # Another user may not read this bucket's objects into a bucket of their own.
    theirs = unique_bucket()
    s3_other.create_bucket(Bucket=theirs)
    try:
        with raises_s3("AccessDenied", 403):
            s3_other.copy_object(Bucket=theirs, Key="d", CopySource={"Bucket": bucket, "Key": "src"})
    finally:
        s3_other.delete_bucket(Bucket=theirs)


@pytest.mark.boto3
def test_copy_shares_bytes_and_rename_is_independent(server, s3, bucket, tmp_path):
    """A rename (copy + delete) of a multipart object adds no data on disk, and afterwards
    deleting or overwriting one name never changes the other."""
    data = os.urandom(64 * MiB + 3)
    src = tmp_path / "ckpt.tmp"
    src.write_bytes(data)
    config = boto3.s3.transfer.TransferConfig(multipart_threshold=8 * MiB,
                                              multipart_chunksize=8 * MiB)
    s3.upload_file(str(src), bucket, "ckpt.tmp", Config=config)
    before = data_files(server)
    stored_before = sum({inode: size for _, inode, _, size in before}.values())
    started = time.monotonic()
    s3.copy_object(Bucket=bucket, Key="ckpt.pt", CopySource={"Bucket": bucket, "Key": "ckpt.tmp"})
    copy_seconds = time.monotonic() - started
    after = data_files(server)
    inodes_before = {i for _, i, _, _ in before}
    inodes_after = {i for _, i, _, _ in after}
    assert inodes_after == inodes_before, "the copy's extents are new names of the same inodes"
    assert len(after) == len(before) + 9, "one new name per part (9 parts)"
    assert stored_before >= len(data)
    s3.delete_object(Bucket=bucket, Key="ckpt.tmp")
    got = s3.get_object(Bucket=bucket, Key="ckpt.pt")["Body"].read()
    assert hashlib.sha256(got).digest() == hashlib.sha256(data).digest()
    s3.put_object(Bucket=bucket, Key="ckpt.tmp", Body=b"new")
    assert s3.get_object(Bucket=bucket, Key="ckpt.pt")["ContentLength"] == len(data)
    print(f"copy of {len(data)} bytes took {copy_seconds * 1000:.1f} ms")
