"""Conditional writes: If-None-Match: * creates only, If-Match replaces only the version
the client saw; a refused write leaves the stored object untouched."""
import concurrent.futures

import pytest

from conftest import make_client, raises_s3


@pytest.mark.needs_new_boto3
def test_if_none_match_creates_only(s3, bucket):
    s3.put_object(Bucket=bucket, Key="guarded", Body=b"original", IfNoneMatch="*")
    with raises_s3("PreconditionFailed", 412):
        s3.put_object(Bucket=bucket, Key="guarded", Body=b"clobber", IfNoneMatch="*")
    assert s3.get_object(Bucket=bucket, Key="guarded")["Body"].read() == b"original"


@pytest.mark.needs_new_boto3
def test_if_match_replaces_only_the_seen_version(s3, bucket):
    etag = s3.put_object(Bucket=bucket, Key="doc", Body=b"v1")["ETag"]
    with raises_s3("PreconditionFailed", 412):
        s3.put_object(Bucket=bucket, Key="doc", Body=b"v2",
                      IfMatch='"0123456789abcdef0123456789abcdef"')
    assert s3.get_object(Bucket=bucket, Key="doc")["Body"].read() == b"v1"
    s3.put_object(Bucket=bucket, Key="doc", Body=b"v2", IfMatch=etag)
    assert s3.get_object(Bucket=bucket, Key="doc")["Body"].read() == b"v2"
    with raises_s3("NoSuchKey", 404):
        s3.put_object(Bucket=bucket, Key="never", Body=b"x", IfMatch=etag)


@pytest.mark.needs_new_boto3
def test_racing_creates_have_one_winner(server, bucket):
    def attempt(i):
        client = make_client(server)
        try:
            client.put_object(Bucket=bucket, Key="contended", Body=f"writer {i}".encode(),
                              IfNoneMatch="*")
            return i
        except client.exceptions.ClientError as e:
            assert e.response["Error"]["Code"] == "PreconditionFailed", e.response
            return None

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(attempt, range(8)))
    winners = [r for r in results if r is not None]
    assert len(winners) == 1, results
    body = make_client(server).get_object(Bucket=bucket, Key="contended")["Body"].read()
    assert body == f"writer {winners[0]}".encode()
