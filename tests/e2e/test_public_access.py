"""A bucket's ownership controls and public access block: Put/Get/DeleteBucketOwnershipControls
(and x-amz-object-ownership on CreateBucket), Put/Get/DeletePublicAccessBlock, their S3
errors, what BlockPublicPolicy and RestrictPublicBuckets do to a bucket policy, and the
gateway's defaults for new buckets (server.default_object_ownership,
server.default_public_access_block)."""
import json

import botocore
import pytest
import requests

import s3sign
from conftest import make_client, raises_s3, raw_exchange, unique_bucket, empty_and_delete


def public_read(bucket):
    return json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
        "Resource": f"arn:aws:s3:::{bucket}/*"}]})


def ownership(s3, bucket):
    rules = s3.get_bucket_ownership_controls(Bucket=bucket)["OwnershipControls"]["Rules"]
    return [r["ObjectOwnership"] for r in rules]


def test_ownership_controls(s3, bucket):
    with raises_s3("OwnershipControlsNotFoundError", 404):
        s3.get_bucket_ownership_controls(Bucket=bucket)
    for mode in ("BucketOwnerEnforced", "BucketOwnerPreferred", "ObjectWriter"):
        s3.put_bucket_ownership_controls(
            Bucket=bucket, OwnershipControls={"Rules": [{"ObjectOwnership": mode}]})
        assert ownership(s3, bucket) == [mode]
    with raises_s3("MalformedXML", 400):
        s3.put_bucket_ownership_controls(
            Bucket=bucket, OwnershipControls={"Rules": [{"ObjectOwnership": "Nobody"}]})
    with raises_s3("MalformedXML", 400):
        s3.put_bucket_ownership_controls(Bucket=bucket, OwnershipControls={"Rules": []})
    assert ownership(s3, bucket) == ["ObjectWriter"]  # the refusals changed nothing
    s3.delete_bucket_ownership_controls(Bucket=bucket)
    with raises_s3("OwnershipControlsNotFoundError", 404):
        s3.get_bucket_ownership_controls(Bucket=bucket)


def test_create_bucket_with_object_ownership(server, s3):
    name = unique_bucket("own")
    s3.create_bucket(Bucket=name, ObjectOwnership="BucketOwnerEnforced")
    try:
        assert ownership(s3, name) == ["BucketOwnerEnforced"]
    finally:
        empty_and_delete(s3, name)
    signer = s3sign.SigV4(server.access_key, server.secret_key, server.region)
    bad = unique_bucket("own")
    resp = raw_exchange(server, s3sign.signed_request_bytes(
        signer, "PUT", server.netloc, f"/{bad}",
        extra_headers={"x-amz-object-ownership": "Everyone"}))
    assert resp is not None and (resp.status, resp.code) == (400, "InvalidArgument"), resp
    with raises_s3("404", 404):  # a HEAD's error has no body
        s3.head_bucket(Bucket=bad)


def test_public_access_block_round_trip(s3, bucket):
    with raises_s3("NoSuchPublicAccessBlockConfiguration", 404):
        s3.get_public_access_block(Bucket=bucket)
    config = {"BlockPublicAcls": True, "IgnorePublicAcls": False, "BlockPublicPolicy": True,
              "RestrictPublicBuckets": False}
    s3.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration=config)
    assert s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"] == config
    s3.put_public_access_block(Bucket=bucket,
                               PublicAccessBlockConfiguration={"RestrictPublicBuckets": True})
    got = s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"]
    assert got == {"BlockPublicAcls": False, "IgnorePublicAcls": False,
                   "BlockPublicPolicy": False, "RestrictPublicBuckets": True}
    s3.delete_public_access_block(Bucket=bucket)
    with raises_s3("NoSuchPublicAccessBlockConfiguration", 404):
        s3.get_public_access_block(Bucket=bucket)


def test_block_public_policy_refuses_a_public_policy(s3, bucket):
    s3.put_public_access_block(Bucket=bucket,
                               PublicAccessBlockConfiguration={"BlockPublicPolicy": True})
    with raises_s3("AccessDenied", 403):
        s3.put_bucket_policy(Bucket=bucket, Policy=public_read(bucket))
    with raises_s3("NoSuchBucketPolicy", 404):
        s3.get_bucket_policy(Bucket=bucket)
    # Narrowed to an address, it is not public: accepted.
    narrowed = json.loads(public_read(bucket))
    narrowed["Statement"][0]["Condition"] = {"IpAddress": {"aws:SourceIp": "127.0.0.1/32"}}
    s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps(narrowed))
    s3.delete_public_access_block(Bucket=bucket)
    s3.put_bucket_policy(Bucket=bucket, Policy=public_read(bucket))


def test_restrict_public_buckets_keeps_a_public_policy_to_the_owner(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"v")
    s3.put_bucket_policy(Bucket=bucket, Policy=public_read(bucket))
    url = f"{server.endpoint}/{bucket}/k"
    assert requests.get(url, timeout=30).status_code == 200
    s3.put_public_access_block(Bucket=bucket,
                               PublicAccessBlockConfiguration={"RestrictPublicBuckets": True})
    assert requests.get(url, timeout=30).status_code == 403
    anonymous = make_client(server, signature_version=botocore.UNSIGNED)
    with raises_s3("AccessDenied", 403):
        anonymous.get_object(Bucket=bucket, Key="k")
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"v"
    s3.delete_public_access_block(Bucket=bucket)
    assert requests.get(url, timeout=30).status_code == 200


def test_the_gateways_defaults_for_new_buckets(strata_factory):
    srv = strata_factory(overrides={"server": {"default_object_ownership": "BucketOwnerEnforced",
                                               "default_public_access_block": True}})
    s3 = make_client(srv)
    s3.create_bucket(Bucket="defaults")
    assert ownership(s3, "defaults") == ["BucketOwnerEnforced"]
    assert s3.get_public_access_block(Bucket="defaults")["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True, "IgnorePublicAcls": True, "BlockPublicPolicy": True,
        "RestrictPublicBuckets": True}
    with raises_s3("AccessDenied", 403):
        s3.put_bucket_policy(Bucket="defaults", Policy=public_read("defaults"))
    # A header still chooses the ownership of its bucket.
    s3.create_bucket(Bucket="writer-owned", ObjectOwnership="ObjectWriter")
    assert ownership(s3, "writer-owned") == ["ObjectWriter"]
