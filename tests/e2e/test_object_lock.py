"""Object lock (WORM) with the aws CLI (v1 and v2) and boto3: buckets made with object lock
(versioned, versioning never suspended), the lock configuration and its default retention,
retention and legal holds set on writes and on versions, what they refuse (removing a locked
version, shortening a COMPLIANCE date, weakening GOVERNANCE without the bypass and its
permission), the delete markers S3 still makes, and the Content-MD5 lock PUTs need.

COMPLIANCE versions made here cannot be removed until their dates: their buckets are left
to the session server's teardown."""
import base64
import datetime
import hashlib
import json

import pytest

import s3sign
from conftest import (OTHER_AK, OTHER_SK, aws_clis, empty_and_delete, make_client, raises_s3,
                      raw_exchange, run_aws, unique_bucket)


def iso_in(seconds):
    moment = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def aws_json(cli, server, tmp_path, *args, check=True):
    res = run_aws(cli, server, ["s3api", *args], tmp_path, check=check)
    return json.loads(res.stdout) if check and res.stdout.strip() else res


def remove_versions(s3, bucket):
    """Every version and marker, GOVERNANCE bypassed, holds lifted; then the bucket."""
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket):
        for v in page.get("Versions", []) + page.get("DeleteMarkers", []):
            if v in page.get("Versions", []):
                s3.put_object_legal_hold(Bucket=bucket, Key=v["Key"], VersionId=v["VersionId"],
                                         LegalHold={"Status": "OFF"})
            s3.delete_object(Bucket=bucket, Key=v["Key"], VersionId=v["VersionId"],
                             BypassGovernanceRetention=True)
    s3.delete_bucket(Bucket=bucket)


@pytest.fixture
def locked_bucket(s3):
    name = unique_bucket("lock")
    s3.create_bucket(Bucket=name, ObjectLockEnabledForBucket=True)
    yield name
    remove_versions(s3, name)


@pytest.mark.parametrize("cli", aws_clis())
def test_governance_default_retention_with_the_aws_cli(server, s3, tmp_path, cli):
    name = unique_bucket("lock")
    run_aws(cli, server, ["s3api", "create-bucket", "--bucket", name,
                          "--object-lock-enabled-for-bucket"], tmp_path)
    try:
        versioning = aws_json(cli, server, tmp_path, "get-bucket-versioning", "--bucket", name)
        assert versioning["Status"] == "Enabled"
        config = {"ObjectLockEnabled": "Enabled",
                  "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}}}
        run_aws(cli, server, ["s3api", "put-object-lock-configuration", "--bucket", name,
                              "--object-lock-configuration", json.dumps(config)], tmp_path)
        got = aws_json(cli, server, tmp_path, "get-object-lock-configuration", "--bucket", name)
        assert got["ObjectLockConfiguration"] == config
        body = tmp_path / "body"
        body.write_bytes(b"kept")
        put = aws_json(cli, server, tmp_path, "put-object", "--bucket", name, "--key", "k",
                       "--body", str(body))
        head = aws_json(cli, server, tmp_path, "head-object", "--bucket", name, "--key", "k")
        assert head["ObjectLockMode"] == "GOVERNANCE"
        until = datetime.datetime.fromisoformat(
            head["ObjectLockRetainUntilDate"].replace("Z", "+00:00"))
        left = until - datetime.datetime.now(datetime.timezone.utc)
        assert datetime.timedelta(hours=23) < left <= datetime.timedelta(days=1), left
        refused = run_aws(cli, server, ["s3api", "delete-object", "--bucket", name, "--key", "k",
                                        "--version-id", put["VersionId"]], tmp_path, check=False)
        assert refused.returncode != 0 and "AccessDenied" in refused.stderr, refused.stderr
        # A delete without a version id still makes a marker.
        marker = aws_json(cli, server, tmp_path, "delete-object", "--bucket", name, "--key", "k")
        assert marker["DeleteMarker"] is True
        # Suspending versioning is refused.
        refused = run_aws(cli, server, ["s3api", "put-bucket-versioning", "--bucket", name,
                                        "--versioning-configuration", "Status=Suspended"],
                          tmp_path, check=False)
        assert "InvalidBucketState" in refused.stderr, refused.stderr
        run_aws(cli, server, ["s3api", "delete-object", "--bucket", name, "--key", "k",
                              "--version-id", put["VersionId"], "--bypass-governance-retention"],
                tmp_path)
        run_aws(cli, server, ["s3api", "delete-object", "--bucket", name, "--key", "k",
                              "--version-id", marker["VersionId"]], tmp_path)
    finally:
        remove_versions(s3, name)


@pytest.mark.parametrize("cli", aws_clis())
def test_compliance_retention_is_only_ever_extended(server, s3, tmp_path, cli):
    name = unique_bucket("lock")
    s3.create_bucket(Bucket=name, ObjectLockEnabledForBucket=True)
    until = iso_in(3600)
    version = s3.put_object(Bucket=name, Key="c", Body=b"compliant",
                            ObjectLockMode="COMPLIANCE",
                            ObjectLockRetainUntilDate=until)["VersionId"]
    got = aws_json(cli, server, tmp_path, "get-object-retention", "--bucket", name, "--key", "c",
                   "--version-id", version)
    assert got["Retention"]["Mode"] == "COMPLIANCE"
    shorter = json.dumps({"Mode": "COMPLIANCE", "RetainUntilDate": iso_in(60)})
    refused = run_aws(cli, server, ["s3api", "put-object-retention", "--bucket", name, "--key",
                                    "c", "--retention", shorter, "--bypass-governance-retention"],
                      tmp_path, check=False)
    assert "AccessDenied" in refused.stderr, refused.stderr
    weaker = json.dumps({"Mode": "GOVERNANCE", "RetainUntilDate": iso_in(7200)})
    refused = run_aws(cli, server, ["s3api", "put-object-retention", "--bucket", name, "--key",
                                    "c", "--retention", weaker], tmp_path, check=False)
    assert "AccessDenied" in refused.stderr, refused.stderr
    longer = json.dumps({"Mode": "COMPLIANCE", "RetainUntilDate": iso_in(7200)})
    run_aws(cli, server, ["s3api", "put-object-retention", "--bucket", name, "--key", "c",
                          "--retention", longer], tmp_path)
    with raises_s3("AccessDenied", 403):
        s3.delete_object(Bucket=name, Key="c", VersionId=version, BypassGovernanceRetention=True)
    with raises_s3("BucketNotEmpty", 409):
        s3.delete_bucket(Bucket=name)
    assert s3.get_object(Bucket=name, Key="c", VersionId=version)["Body"].read() == b"compliant"


def test_legal_holds(s3, locked_bucket):
    version = s3.put_object(Bucket=locked_bucket, Key="h", Body=b"held",
                            ObjectLockLegalHoldStatus="ON")["VersionId"]
    assert s3.head_object(Bucket=locked_bucket, Key="h")["ObjectLockLegalHoldStatus"] == "ON"
    assert s3.get_object_legal_hold(Bucket=locked_bucket, Key="h")["LegalHold"]["Status"] == "ON"
    with raises_s3("AccessDenied", 403):
        s3.delete_object(Bucket=locked_bucket, Key="h", VersionId=version,
                         BypassGovernanceRetention=True)
    s3.put_object_legal_hold(Bucket=locked_bucket, Key="h", VersionId=version,
                             LegalHold={"Status": "OFF"})
    assert s3.get_object_legal_hold(Bucket=locked_bucket, Key="h")["LegalHold"]["Status"] == "OFF"
    assert "ObjectLockLegalHoldStatus" not in s3.head_object(Bucket=locked_bucket, Key="h")
    s3.delete_object(Bucket=locked_bucket, Key="h", VersionId=version)
    assert "Versions" not in s3.list_object_versions(Bucket=locked_bucket, Prefix="h")


def test_deleteobjects_refuses_locked_versions_key_by_key(s3, locked_bucket):
    held = s3.put_object(Bucket=locked_bucket, Key="a", Body=b"a",
                         ObjectLockLegalHoldStatus="ON")["VersionId"]
    free = s3.put_object(Bucket=locked_bucket, Key="b", Body=b"b")["VersionId"]
    resp = s3.delete_objects(Bucket=locked_bucket, Delete={"Objects": [
        {"Key": "a", "VersionId": held}, {"Key": "b", "VersionId": free}]})
    assert [d["Key"] for d in resp.get("Deleted", [])] == ["b"]
    assert [(e["Key"], e["VersionId"], e["Code"]) for e in resp["Errors"]] == \
        [("a", held, "AccessDenied")]


def test_governance_bypass_needs_its_permission(server, s3, locked_bucket):
    other = make_client(server, OTHER_AK, OTHER_SK)
    version = s3.put_object(Bucket=locked_bucket, Key="g", Body=b"g",
                            ObjectLockMode="GOVERNANCE",
                            ObjectLockRetainUntilDate=iso_in(3600))["VersionId"]
    resource = f"arn:aws:s3:::{locked_bucket}/*"
    statement = {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam:::user/{OTHER_AK}"},
                 "Action": ["s3:DeleteObjectVersion", "s3:PutObjectRetention",
                            "s3:GetObjectRetention"], "Resource": resource}
    s3.put_bucket_policy(Bucket=locked_bucket, Policy=json.dumps(
        {"Version": "2012-10-17", "Statement": [statement]}))
    with raises_s3("AccessDenied", 403):
        other.delete_object(Bucket=locked_bucket, Key="g", VersionId=version,
                            BypassGovernanceRetention=True)
    with raises_s3("AccessDenied", 403):
        other.put_object_retention(Bucket=locked_bucket, Key="g", VersionId=version,
                                   Retention={}, BypassGovernanceRetention=True)
    # Extending needs no bypass.
    other.put_object_retention(Bucket=locked_bucket, Key="g", VersionId=version,
                               Retention={"Mode": "GOVERNANCE",
                                          "RetainUntilDate": iso_in(7200)})
    statement["Action"].append("s3:BypassGovernanceRetention")
    s3.put_bucket_policy(Bucket=locked_bucket, Policy=json.dumps(
        {"Version": "2012-10-17", "Statement": [statement]}))
    other.put_object_retention(Bucket=locked_bucket, Key="g", VersionId=version, Retention={},
                               BypassGovernanceRetention=True)
    with raises_s3("NoSuchObjectLockConfiguration", 404):
        other.get_object_retention(Bucket=locked_bucket, Key="g", VersionId=version)
    s3.delete_bucket_policy(Bucket=locked_bucket)


def test_lock_on_copies_and_multipart_uploads(s3, locked_bucket):
    s3.put_object(Bucket=locked_bucket, Key="src", Body=b"source", ObjectLockLegalHoldStatus="ON")
    copied = s3.copy_object(Bucket=locked_bucket, Key="dst",
                            CopySource={"Bucket": locked_bucket, "Key": "src"},
                            ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=iso_in(600))
    head = s3.head_object(Bucket=locked_bucket, Key="dst")
    assert head["ObjectLockMode"] == "GOVERNANCE"
    assert "ObjectLockLegalHoldStatus" not in head  # the source's hold stays with it
    with raises_s3("AccessDenied", 403):
        s3.delete_object(Bucket=locked_bucket, Key="dst", VersionId=copied["VersionId"])
    upload = s3.create_multipart_upload(Bucket=locked_bucket, Key="mp",
                                        ObjectLockMode="GOVERNANCE",
                                        ObjectLockRetainUntilDate=iso_in(600))
    part = s3.upload_part(Bucket=locked_bucket, Key="mp", UploadId=upload["UploadId"],
                          PartNumber=1, Body=b"p" * 100)
    done = s3.complete_multipart_upload(
        Bucket=locked_bucket, Key="mp", UploadId=upload["UploadId"],
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
    assert s3.head_object(Bucket=locked_bucket, Key="mp")["ObjectLockMode"] == "GOVERNANCE"
    with raises_s3("AccessDenied", 403):
        s3.delete_object(Bucket=locked_bucket, Key="mp", VersionId=done["VersionId"])


def test_lock_requests_refused(server, s3, bucket, locked_bucket):
    # Lock headers or lock calls on a bucket without object lock.
    with raises_s3("InvalidRequest", 400):
        s3.put_object(Bucket=bucket, Key="k", Body=b"x", ObjectLockLegalHoldStatus="ON")
    with raises_s3("ObjectLockConfigurationNotFoundError", 404):
        s3.get_object_lock_configuration(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    with raises_s3("InvalidRequest", 400):
        s3.get_object_retention(Bucket=bucket, Key="k")
    with raises_s3("InvalidBucketState", 409):
        s3.put_object_lock_configuration(Bucket=bucket, ObjectLockConfiguration={
            "ObjectLockEnabled": "Enabled"})
    # Bad headers and documents.
    with raises_s3("InvalidArgument", 400):
        s3.put_object(Bucket=locked_bucket, Key="k", Body=b"x", ObjectLockMode="GOVERNANCE")
    with raises_s3("InvalidArgument", 400):
        s3.put_object(Bucket=locked_bucket, Key="k", Body=b"x", ObjectLockMode="GOVERNANCE",
                      ObjectLockRetainUntilDate=iso_in(-60))
    with raises_s3("InvalidArgument", 400):
        s3.put_object_lock_configuration(Bucket=locked_bucket, ObjectLockConfiguration={
            "ObjectLockEnabled": "Enabled",
            "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 0}}})
    with raises_s3("MalformedXML", 400):
        s3.put_object_lock_configuration(Bucket=locked_bucket, ObjectLockConfiguration={
            "ObjectLockEnabled": "Enabled",
            "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1, "Years": 1}}})
    s3.put_object(Bucket=locked_bucket, Key="k", Body=b"x")
    with raises_s3("NoSuchObjectLockConfiguration", 404):
        s3.get_object_retention(Bucket=locked_bucket, Key="k")
    # A lock PUT without Content-MD5 or a checksum.
    body = (b"<LegalHold xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            b"<Status>ON</Status></LegalHold>")
    signer = s3sign.SigV4(server.access_key, server.secret_key, server.region)
    request = s3sign.signed_request_bytes(signer, "PUT", server.netloc, f"/{locked_bucket}/k",
                                          query=[("legal-hold", "")], body=body)
    response = raw_exchange(server, request)
    assert (response.status, response.code) == (400, "InvalidRequest"), response
    assert "ObjectLockLegalHoldStatus" not in s3.head_object(Bucket=locked_bucket, Key="k")
    # A PutObject with lock headers needs one too (boto3 sends Content-MD5 or a checksum).
    lock = {"x-amz-object-lock-legal-hold": "ON"}
    request = s3sign.signed_request_bytes(signer, "PUT", server.netloc,
                                          f"/{locked_bucket}/held", body=b"data",
                                          extra_headers=lock)
    response = raw_exchange(server, request)
    assert (response.status, response.code) == (400, "InvalidRequest"), response
    with raises_s3("404", 404):
        s3.head_object(Bucket=locked_bucket, Key="held")
    md5 = base64.b64encode(hashlib.md5(b"data").digest()).decode()
    request = s3sign.signed_request_bytes(signer, "PUT", server.netloc,
                                          f"/{locked_bucket}/held", body=b"data",
                                          extra_headers={**lock, "content-md5": md5})
    response = raw_exchange(server, request)
    assert response.status == 200, response
    assert s3.head_object(Bucket=locked_bucket, Key="held")["ObjectLockLegalHoldStatus"] == "ON"
