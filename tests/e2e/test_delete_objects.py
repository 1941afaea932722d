"""DeleteObjects (POST /bucket?delete): up to 1000 keys, quiet mode, per-key results,
integrity of the request body, and the aws CLI's recursive rm that relies on it."""
import base64
import hashlib

import pytest

import s3sign
from conftest import (ADMIN_AK, ADMIN_SK, aws_clis, raises_s3, raw_exchange, run_aws,
                      unique_bucket)


def keys_in(s3, bucket):
    return sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", []))


@pytest.mark.boto3
def test_delete_objects_reports_each_key(s3, bucket):
    for key in ("a", "b/c", "d e"):
        s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    resp = s3.delete_objects(Bucket=bucket, Delete={"Objects": [
        {"Key": "a"}, {"Key": "b/c"}, {"Key": "d e"}, {"Key": "never-existed"}]})
    assert sorted(d["Key"] for d in resp["Deleted"]) == ["a", "b/c", "d e", "never-existed"]
    assert not resp.get("Errors")
    assert keys_in(s3, bucket) == []


@pytest.mark.boto3
def test_delete_objects_quiet_and_per_key_errors(s3, bucket):
    s3.put_object(Bucket=bucket, Key="keep", Body=b"x")
    s3.put_object(Bucket=bucket, Key="gone", Body=b"x")
    resp = s3.delete_objects(Bucket=bucket, Delete={"Quiet": True, "Objects": [
        {"Key": "gone"}, {"Key": "k" * 1025}]})
    assert not resp.get("Deleted"), "quiet mode lists only errors"
    assert [(e["Key"], e["Code"]) for e in resp["Errors"]] == [("k" * 1025, "KeyTooLongError")]
    assert keys_in(s3, bucket) == ["keep"]


@pytest.mark.boto3
def test_delete_objects_limits(s3, bucket):
    with raises_s3("MalformedXML", 400):
        s3.delete_objects(Bucket=bucket,
                          Delete={"Objects": [{"Key": f"k{i}"} for i in range(1001)]})
    with raises_s3("NoSuchBucket", 404):
        s3.delete_objects(Bucket=unique_bucket("missing"), Delete={"Objects": [{"Key": "a"}]})


@pytest.mark.boto3
def test_delete_objects_of_another_users_bucket(s3, s3_other, bucket):
    s3.put_object(Bucket=bucket, Key="mine", Body=b"x")
    with raises_s3("AccessDenied", 403):
        s3_other.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "mine"}]})
    assert keys_in(s3, bucket) == ["mine"]


def test_delete_objects_body_must_match_its_digest(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="victim", Body=b"x")
    body = b"<Delete><Object><Key>victim</Key></Object></Delete>"
    wrong_md5 = base64.b64encode(hashlib.md5(b"something else").digest()).decode()
    req = s3sign.signed_request_bytes(
        s3sign.SigV4(ADMIN_AK, ADMIN_SK, server.region), "POST", server.netloc, f"/{bucket}",
        query=[("delete", "")], body=body, extra_headers={"content-md5": wrong_md5})
    resp = raw_exchange(server, req)
    assert resp is not None and resp.status == 400 and resp.code == "BadDigest", resp
    assert keys_in(s3, bucket) == ["victim"]
    garbage = b"<Delete><Object><Key>victim</Key></Object>"
    req = s3sign.signed_request_bytes(
        s3sign.SigV4(ADMIN_AK, ADMIN_SK, server.region), "POST", server.netloc, f"/{bucket}",
        query=[("delete", "")], body=garbage)
    resp = raw_exchange(server, req)
    assert resp is not None and resp.status == 400 and resp.code == "MalformedXML", resp
    assert keys_in(s3, bucket) == ["victim"]


@pytest.mark.parametrize("cli", aws_clis())
def test_aws_cli_recursive_rm(server, s3, bucket, tmp_path, cli):
    for i in range(25):
        s3.put_object(Bucket=bucket, Key=f"tree/{i % 3}/f{i}", Body=b"x")
    s3.put_object(Bucket=bucket, Key="other", Body=b"x")
    run_aws(cli, server, ["s3", "rm", "--recursive", f"s3://{bucket}/tree/"], tmp_path)
    assert keys_in(s3, bucket) == ["other"]
