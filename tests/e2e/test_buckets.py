"""Bucket operations against S3's documented behaviour (CreateBucket, HeadBucket,
DeleteBucket, ListBuckets, GetBucketLocation)."""
import datetime

import pytest

from conftest import empty_and_delete, make_client, raises_s3, unique_bucket


def test_create_head_delete(s3):
    name = unique_bucket()
    resp = s3.create_bucket(Bucket=name)
    assert resp["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert s3.head_bucket(Bucket=name)["ResponseMetadata"]["HTTPStatusCode"] == 200
    resp = s3.delete_bucket(Bucket=name)
    assert resp["ResponseMetadata"]["HTTPStatusCode"] == 204
    with raises_s3("404", 404):
        s3.head_bucket(Bucket=name)


def test_head_missing_bucket_is_404(s3):
    with raises_s3("404", 404):
        s3.head_bucket(Bucket=unique_bucket("missing"))


def test_get_location_default_region(s3, bucket):
    # S3 reports us-east-1 as an empty LocationConstraint; boto3 turns it into None.
    resp = s3.get_bucket_location(Bucket=bucket)
    assert resp["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert resp.get("LocationConstraint") in (None, "")


def test_location_constraint_in_other_region(strata_factory):
    srv = strata_factory({"server": {"region": "eu-west-1"}})
    client = make_client(srv)
    assert client.meta.region_name == "eu-west-1"
    name = unique_bucket()
    client.create_bucket(Bucket=name,
                         CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    assert client.get_bucket_location(Bucket=name)["LocationConstraint"] == "eu-west-1"
    # A constraint that is not the endpoint's region is refused (S3:
    # IllegalLocationConstraintException; some implementations: InvalidLocationConstraint).
    other = unique_bucket()
    with pytest.raises(Exception) as info:
        client.create_bucket(Bucket=other,
                             CreateBucketConfiguration={"LocationConstraint": "ap-south-1"})
    resp = info.value.response
    assert resp["ResponseMetadata"]["HTTPStatusCode"] == 400, resp
    assert resp["Error"]["Code"] in ("IllegalLocationConstraintException",
                                     "InvalidLocationConstraint"), resp
    with raises_s3("404", 404):
        client.head_bucket(Bucket=other)
    # Requests signed for another region are refused with the region S3 expects.
    wrong = make_client(srv, region="us-east-1")
    with pytest.raises(Exception) as info:
        wrong.list_buckets()
    assert info.value.response["ResponseMetadata"]["HTTPStatusCode"] in (400, 403)
    assert info.value.response["Error"]["Code"] in ("AuthorizationHeaderMalformed",
                                                    "SignatureDoesNotMatch")
    empty_and_delete(client, name)


def test_create_with_location_constraint_of_server_region(strata_factory):
    srv = strata_factory({"server": {"region": "eu-central-1"}})
    client = make_client(srv)
    name = unique_bucket()
    resp = client.create_bucket(
        Bucket=name, CreateBucketConfiguration={"LocationConstraint": "eu-central-1"})
    assert resp["ResponseMetadata"]["HTTPStatusCode"] == 200
    # Location header: S3 answers "/bucket" for path-style creates.
    assert resp.get("Location", "").endswith(name)
    client.head_bucket(Bucket=name)
    client.delete_bucket(Bucket=name)


@pytest.mark.parametrize("name", [
    "ab",                      # too short (3..63)
    "a" * 64,                  # too long
    "UPPERCASE",               # upper case
    "under_score",             # underscore
    "-leading-hyphen",         # must begin with a letter or digit
    "trailing-hyphen-",        # must end with a letter or digit
    "double..dots",            # adjacent periods
    "192.168.5.4",             # formatted as an IP address
    "xn--punycode-prefix",     # reserved prefix
    "bucket-s3alias",          # reserved suffix
])
def test_invalid_bucket_name(s3, name):
    with raises_s3("InvalidBucketName", 400):
        s3.create_bucket(Bucket=name)


def test_bucket_already_owned_by_you(s3, bucket):
    # us-east-1 (this server's region) answers 200, as S3 does there; other regions 409
    # BucketAlreadyOwnedByYou (test_listing_edges.py).
    assert s3.create_bucket(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_bucket_already_exists_for_another_user(s3_other, bucket):
    with raises_s3("BucketAlreadyExists", 409):
        s3_other.create_bucket(Bucket=bucket)


def test_delete_non_empty_then_empty(s3):
    name = unique_bucket()
    s3.create_bucket(Bucket=name)
    s3.put_object(Bucket=name, Key="k", Body=b"x")
    with raises_s3("BucketNotEmpty", 409):
        s3.delete_bucket(Bucket=name)
    # Still there, object intact.
    assert s3.get_object(Bucket=name, Key="k")["Body"].read() == b"x"
    s3.delete_object(Bucket=name, Key="k")
    assert s3.delete_bucket(Bucket=name)["ResponseMetadata"]["HTTPStatusCode"] == 204
    with raises_s3("404", 404):
        s3.head_bucket(Bucket=name)
    with raises_s3("NoSuchBucket", 404):
        s3.delete_bucket(Bucket=name)


def test_operations_on_missing_bucket(s3):
    name = unique_bucket("missing")
    with raises_s3("NoSuchBucket", 404):
        s3.put_object(Bucket=name, Key="k", Body=b"x")
    with raises_s3("NoSuchBucket", 404):
        s3.get_object(Bucket=name, Key="k")
    with raises_s3("NoSuchBucket", 404):
        s3.list_objects_v2(Bucket=name)
    with raises_s3("NoSuchBucket", 404):
        s3.get_bucket_location(Bucket=name)


def test_list_buckets(s3):
    names = sorted(unique_bucket() for _ in range(3))
    before = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5)
    try:
        for n in names:
            s3.create_bucket(Bucket=n)
        resp = s3.list_buckets()
        assert resp["ResponseMetadata"]["HTTPStatusCode"] == 200
        listed = [b["Name"] for b in resp["Buckets"]]
        for n in names:
            assert n in listed
        assert listed == sorted(listed), "S3 lists buckets in name order"
        for b in resp["Buckets"]:
            if b["Name"] in names:
                assert b["CreationDate"] > before
        assert resp.get("Owner", {}).get("ID"), "ListBuckets names the owner"
    finally:
        for n in names:
            empty_and_delete(s3, n)
    listed = [b["Name"] for b in s3.list_buckets()["Buckets"]]
    for n in names:
        assert n not in listed


def test_list_buckets_only_shows_own_buckets(s3, s3_other, bucket):
    theirs = [b["Name"] for b in s3_other.list_buckets()["Buckets"]]
    assert bucket not in theirs


def test_other_user_cannot_read_or_delete(s3, s3_other, bucket):
    s3.put_object(Bucket=bucket, Key="private", Body=b"secret data")
    with raises_s3("AccessDenied", 403):
        s3_other.get_object(Bucket=bucket, Key="private")
    with raises_s3("AccessDenied", 403):
        s3_other.put_object(Bucket=bucket, Key="intruder", Body=b"x")
    with raises_s3("AccessDenied", 403):
        s3_other.delete_bucket(Bucket=bucket)
    assert s3.get_object(Bucket=bucket, Key="private")["Body"].read() == b"secret data"
