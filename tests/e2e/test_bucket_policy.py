"""Bucket policies: Put/Get/DeleteBucketPolicy and GetBucketPolicyStatus, and their effect on
requests as S3 evaluates them: an explicit Deny wins (even over the owner, but never on the
policy calls themselves), an Allow grants another user or an anonymous caller, conditions
read the request (source address, list prefix, version ids), DeleteObjects is judged key by
key and a copy by its source's policy. Two users (the session server's admin, who owns the
buckets, and OTHER) and unsigned clients (boto3 UNSIGNED, plain HTTP)."""
import json

import botocore
import pytest
import requests

from conftest import (OTHER_AK, OTHER_SK, empty_and_delete, make_client, raises_s3, unique_bucket,
                      xml_code)

OTHER_ARN = f"arn:aws:iam:::user/{OTHER_AK}"


def put_policy(s3, bucket, *statements, version="2012-10-17"):
    s3.put_bucket_policy(Bucket=bucket,
                         Policy=json.dumps({"Version": version, "Statement": list(statements)}))


def allow(principal, actions, resources, condition=None, effect="Allow"):
    statement = {"Effect": effect, "Principal": principal, "Action": actions,
                 "Resource": resources}
    if condition:
        statement["Condition"] = condition
    return statement


@pytest.fixture
def anonymous(server):
    return make_client(server, signature_version=botocore.UNSIGNED)


@pytest.fixture
def other(server):
    return make_client(server, OTHER_AK, OTHER_SK)


def test_put_get_delete_and_status(s3, bucket):
    with raises_s3("NoSuchBucketPolicy", 404):
        s3.get_bucket_policy(Bucket=bucket)
    assert s3.get_bucket_policy_status(Bucket=bucket)["PolicyStatus"]["IsPublic"] is False
    text = json.dumps({"Version": "2012-10-17", "Id": "p1", "Statement": [
        allow("*", "s3:GetObject", f"arn:aws:s3:::{bucket}/*")]}, indent=2)
    resp = s3.put_bucket_policy(Bucket=bucket, Policy=text)
    assert resp["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert s3.get_bucket_policy(Bucket=bucket)["Policy"] == text  # as it was put
    assert s3.get_bucket_policy_status(Bucket=bucket)["PolicyStatus"]["IsPublic"] is True
    # Narrowed to an address: not public.
    put_policy(s3, bucket, allow("*", "s3:GetObject", f"arn:aws:s3:::{bucket}/*",
                                 {"IpAddress": {"aws:SourceIp": "127.0.0.1/32"}}))
    assert s3.get_bucket_policy_status(Bucket=bucket)["PolicyStatus"]["IsPublic"] is False
    resp = s3.delete_bucket_policy(Bucket=bucket)
    assert resp["ResponseMetadata"]["HTTPStatusCode"] == 204
    with raises_s3("NoSuchBucketPolicy", 404):
        s3.get_bucket_policy(Bucket=bucket)
    s3.delete_bucket_policy(Bucket=bucket)  # none: still 204


@pytest.mark.parametrize("policy", [
    "not json",
    '{"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:NoSuchAction", '
    '"Resource": "arn:aws:s3:::BUCKET/*"}]}',
    '{"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", '
    '"Resource": "arn:aws:s3:::another-bucket/*"}]}',
    '{"Statement": [{"Effect": "Maybe", "Principal": "*", "Action": "s3:GetObject", '
    '"Resource": "arn:aws:s3:::BUCKET/*"}]}',
    '{"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject"}]}',
    '{"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", '
    '"Resource": "arn:aws:s3:::BUCKET/*", "Sid": "' + "x" * 21000 + '"}]}',
])
def test_malformed_policies_change_nothing(s3, bucket, policy):
    put_policy(s3, bucket, allow("*", "s3:GetObject", f"arn:aws:s3:::{bucket}/kept"))
    before = s3.get_bucket_policy(Bucket=bucket)["Policy"]
    with raises_s3("MalformedPolicy", 400):
        s3.put_bucket_policy(Bucket=bucket, Policy=policy.replace("BUCKET", bucket))
    assert s3.get_bucket_policy(Bucket=bucket)["Policy"] == before


def test_a_body_far_past_the_limit_is_malformed(server, s3, bucket):
    with raises_s3("MalformedPolicy", 400):
        s3.put_bucket_policy(Bucket=bucket, Policy="{" + " " * (200 * 1024) + "}")


def test_public_read_serves_anonymous_readers_only_what_it_grants(server, s3, bucket,
                                                                  anonymous):
    s3.put_object(Bucket=bucket, Key="data/a.bin", Body=b"public bytes")
    with raises_s3("AccessDenied", 403):
        anonymous.get_object(Bucket=bucket, Key="data/a.bin")
    put_policy(s3, bucket, allow("*", "s3:GetObject", f"arn:aws:s3:::{bucket}/data/*"))
    assert anonymous.get_object(Bucket=bucket, Key="data/a.bin")["Body"].read() == b"public bytes"
    assert anonymous.head_object(Bucket=bucket, Key="data/a.bin")["ContentLength"] == 12
    r = requests.get(f"{server.endpoint}/{bucket}/data/a.bin", timeout=30)
    assert (r.status_code, r.content) == (200, b"public bytes")
    r = requests.get(f"{server.endpoint}/{bucket}/data/a.bin", headers={"Range": "bytes=7-11"},
                     timeout=30)
    assert (r.status_code, r.content) == (206, b"bytes")
    # A key that does not exist: 404 only to a caller who may list the bucket (AWS's rule,
    # so that no one learns which keys exist), 403 to others.
    with raises_s3("AccessDenied", 403):
        anonymous.get_object(Bucket=bucket, Key="data/missing")
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket=bucket, Key="data/missing")
    # Nothing else: outside the prefix, writes, listings, deletes, the policy, buckets.
    s3.put_object(Bucket=bucket, Key="private/b.bin", Body=b"private")
    with raises_s3("AccessDenied", 403):
        anonymous.get_object(Bucket=bucket, Key="private/b.bin")
    with raises_s3("AccessDenied", 403):
        anonymous.put_object(Bucket=bucket, Key="data/new", Body=b"x")
    with raises_s3("AccessDenied", 403):
        anonymous.list_objects_v2(Bucket=bucket)
    with raises_s3("AccessDenied", 403):
        anonymous.delete_object(Bucket=bucket, Key="data/a.bin")
    with raises_s3("AccessDenied", 403):
        anonymous.get_bucket_policy(Bucket=bucket)
    with raises_s3("AccessDenied", 403):
        anonymous.list_buckets()
    with raises_s3("AccessDenied", 403):
        anonymous.create_bucket(Bucket=unique_bucket("anon"))
    r = requests.get(f"{server.endpoint}/_strata/admin/users", timeout=30)
    assert (r.status_code, xml_code(r.content)) == (403, "AccessDenied"), r.text
    assert s3.get_object(Bucket=bucket, Key="data/a.bin")["Body"].read() == b"public bytes"
    # A version named by id needs s3:GetObjectVersion, which this policy does not grant.
    version = s3.head_object(Bucket=bucket, Key="data/a.bin").get("VersionId", "null")
    with raises_s3("AccessDenied", 403):
        anonymous.get_object(Bucket=bucket, Key="data/a.bin", VersionId=version)


def test_grants_to_another_user(s3, other, bucket):
    s3.put_object(Bucket=bucket, Key="home/bob/notes.txt", Body=b"bob's")
    s3.put_object(Bucket=bucket, Key="home/eve/notes.txt", Body=b"eve's")
    with raises_s3("AccessDenied", 403):
        other.list_objects_v2(Bucket=bucket, Prefix="home/bob/")
    put_policy(
        s3, bucket,
        allow({"AWS": OTHER_ARN}, "s3:ListBucket", f"arn:aws:s3:::{bucket}",
              {"StringLike": {"s3:prefix": ["home/bob/*", "home/bob/"]}}),
        allow({"AWS": [OTHER_ARN]}, ["s3:GetObject", "s3:PutObject"],
              f"arn:aws:s3:::{bucket}/home/bob/*"))
    listed = other.list_objects_v2(Bucket=bucket, Prefix="home/bob/")
    assert [o["Key"] for o in listed["Contents"]] == ["home/bob/notes.txt"]
    with raises_s3("AccessDenied", 403):
        other.list_objects_v2(Bucket=bucket)  # no prefix: the condition fails
    with raises_s3("AccessDenied", 403):
        other.list_objects_v2(Bucket=bucket, Prefix="home/eve/")
    assert other.get_object(Bucket=bucket, Key="home/bob/notes.txt")["Body"].read() == b"bob's"
    other.put_object(Bucket=bucket, Key="home/bob/new.txt", Body=b"by bob")
    assert s3.get_object(Bucket=bucket, Key="home/bob/new.txt")["Body"].read() == b"by bob"
    with raises_s3("AccessDenied", 403):
        other.get_object(Bucket=bucket, Key="home/eve/notes.txt")
    # Bob may list his prefix's keys only: a missing key anywhere is 403 to him (the
    # ListBucket grant is conditional on a prefix this GET does not carry).
    with raises_s3("AccessDenied", 403):
        other.get_object(Bucket=bucket, Key="home/bob/missing.txt")
    with raises_s3("AccessDenied", 403):
        other.delete_object(Bucket=bucket, Key="home/bob/notes.txt")
    # The policy calls are the owner's: without a grant 403, with one 405 (as AWS answers
    # a caller outside the owner's account).
    with raises_s3("AccessDenied", 403):
        other.get_bucket_policy(Bucket=bucket)
    put_policy(s3, bucket, allow({"AWS": OTHER_ARN}, ["s3:GetBucketPolicy", "s3:PutBucketPolicy"],
                                 f"arn:aws:s3:::{bucket}"))
    with raises_s3("MethodNotAllowed", 405):
        other.get_bucket_policy(Bucket=bucket)
    with raises_s3("MethodNotAllowed", 405):
        put_policy(other, bucket, allow("*", "s3:*", f"arn:aws:s3:::{bucket}/*"))
    assert "GetBucketPolicy" in s3.get_bucket_policy(Bucket=bucket)["Policy"]
    # Nothing granted on the bucket's own calls beyond that.
    with raises_s3("AccessDenied", 403):
        other.delete_bucket(Bucket=bucket)


def test_an_explicit_deny_binds_the_owner_but_not_on_the_policy(s3, bucket):
    s3.put_object(Bucket=bucket, Key="keep", Body=b"x")
    put_policy(s3, bucket, allow("*", ["s3:DeleteObject", "s3:PutObject"],
                                 f"arn:aws:s3:::{bucket}/*", effect="Deny"))
    with raises_s3("AccessDenied", 403):
        s3.delete_object(Bucket=bucket, Key="keep")
    with raises_s3("AccessDenied", 403):
        s3.put_object(Bucket=bucket, Key="new", Body=b"y")
    deleted = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "keep"}]})
    assert [(e["Key"], e["Code"]) for e in deleted.get("Errors", [])] == [("keep", "AccessDenied")]
    assert s3.get_object(Bucket=bucket, Key="keep")["Body"].read() == b"x"
    # Even a Deny of every action leaves the owner its policy.
    put_policy(s3, bucket, allow("*", "s3:*", [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"],
                                 effect="Deny"))
    with raises_s3("AccessDenied", 403):
        s3.list_objects_v2(Bucket=bucket)
    assert "Deny" in s3.get_bucket_policy(Bucket=bucket)["Policy"]
    s3.delete_bucket_policy(Bucket=bucket)
    s3.delete_object(Bucket=bucket, Key="keep")


def test_conditions_on_the_source_address(s3, anonymous, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"v")
    put_policy(s3, bucket, allow("*", "s3:GetObject", f"arn:aws:s3:::{bucket}/*",
                                 {"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}))
    with raises_s3("AccessDenied", 403):
        anonymous.get_object(Bucket=bucket, Key="k")
    put_policy(s3, bucket, allow("*", "s3:GetObject", f"arn:aws:s3:::{bucket}/*",
                                 {"IpAddress": {"aws:SourceIp": ["10.0.0.0/8", "127.0.0.0/8"]},
                                  "Bool": {"aws:SecureTransport": "false"}}))
    assert anonymous.get_object(Bucket=bucket, Key="k")["Body"].read() == b"v"
    put_policy(s3, bucket, allow("*", "s3:GetObject", f"arn:aws:s3:::{bucket}/*",
                                 {"Bool": {"aws:SecureTransport": "true"}}))
    with raises_s3("AccessDenied", 403):
        anonymous.get_object(Bucket=bucket, Key="k")


def test_delete_objects_is_judged_key_by_key(s3, other, bucket):
    for key in ("tmp/a", "tmp/b", "keep/c"):
        s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    with raises_s3("AccessDenied", 403):
        other.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "tmp/a"}]})
    put_policy(s3, bucket, allow({"AWS": OTHER_ARN}, "s3:DeleteObject",
                                 f"arn:aws:s3:::{bucket}/tmp/*"))
    resp = other.delete_objects(Bucket=bucket, Delete={"Objects": [
        {"Key": "tmp/a"}, {"Key": "keep/c"}, {"Key": "tmp/b"}]})
    assert sorted(d["Key"] for d in resp.get("Deleted", [])) == ["tmp/a", "tmp/b"]
    assert [(e["Key"], e["Code"]) for e in resp.get("Errors", [])] == [("keep/c", "AccessDenied")]
    listed = s3.list_objects_v2(Bucket=bucket)
    assert [o["Key"] for o in listed["Contents"]] == ["keep/c"]


def test_a_copy_needs_the_sources_grant(s3, other, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"source bytes")
    mine = unique_bucket("other")
    other.create_bucket(Bucket=mine)
    try:
        with raises_s3("AccessDenied", 403):
            other.copy_object(Bucket=mine, Key="dst", CopySource={"Bucket": bucket, "Key": "src"})
        put_policy(s3, bucket, allow({"AWS": OTHER_ARN}, "s3:GetObject",
                                     f"arn:aws:s3:::{bucket}/src"))
        other.copy_object(Bucket=mine, Key="dst", CopySource={"Bucket": bucket, "Key": "src"})
        assert other.get_object(Bucket=mine, Key="dst")["Body"].read() == b"source bytes"
        # Into the owner's bucket: the destination's policy grants no PutObject.
        with raises_s3("AccessDenied", 403):
            other.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src"})
    finally:
        empty_and_delete(other, mine)


def test_owners_show_canonical_ids_that_policies_name(s3, other, bucket):
    listed = other.list_buckets()["Owner"]
    assert listed["DisplayName"] == OTHER_AK
    assert len(listed["ID"]) == 64 and set(listed["ID"]) <= set("0123456789abcdef")
    mine = s3.list_buckets()["Owner"]
    assert mine["ID"] != listed["ID"]
    s3.put_object(Bucket=bucket, Key="k", Body=b"v")
    objects = s3.list_objects_v2(Bucket=bucket, FetchOwner=True)["Contents"]
    assert objects[0]["Owner"] == mine
    with raises_s3("AccessDenied", 403):
        other.get_object(Bucket=bucket, Key="k")
    put_policy(s3, bucket, allow({"CanonicalUser": listed["ID"]}, "s3:GetObject",
                                 f"arn:aws:s3:::{bucket}/*"))
    assert other.get_object(Bucket=bucket, Key="k")["Body"].read() == b"v"


def test_conditions_on_the_objects_own_tags(s3, anonymous, bucket):
    s3.put_object(Bucket=bucket, Key="open", Body=b"o", Tagging="access=public")
    s3.put_object(Bucket=bucket, Key="closed", Body=b"c", Tagging="access=public&level=secret")
    s3.put_object(Bucket=bucket, Key="plain", Body=b"p")
    put_policy(
        s3, bucket,
        allow("*", "s3:GetObject", f"arn:aws:s3:::{bucket}/*",
              {"StringEquals": {"s3:ExistingObjectTag/access": "public"}}),
        allow("*", ["s3:GetObject", "s3:DeleteObject"], f"arn:aws:s3:::{bucket}/*",
              {"StringEquals": {"s3:ExistingObjectTag/level": "secret"}}, effect="Deny"))
    assert anonymous.get_object(Bucket=bucket, Key="open")["Body"].read() == b"o"
    with raises_s3("AccessDenied", 403):
        anonymous.get_object(Bucket=bucket, Key="closed")  # the Deny on its other tag
    with raises_s3("AccessDenied", 403):
        anonymous.get_object(Bucket=bucket, Key="plain")  # no tag: no grant
    with raises_s3("AccessDenied", 403):
        s3.delete_object(Bucket=bucket, Key="closed")  # the owner too
    # The tags are read at each request: untag it and the Deny no longer applies.
    s3.put_object_tagging(Bucket=bucket, Key="closed",
                          Tagging={"TagSet": [{"Key": "access", "Value": "public"}]})
    assert anonymous.get_object(Bucket=bucket, Key="closed")["Body"].read() == b"c"
    s3.delete_object(Bucket=bucket, Key="closed")
