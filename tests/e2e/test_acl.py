"""ACLs: Get/Put Bucket/Object Acl (canned ACLs, x-amz-grant-* headers, AccessControlPolicy
bodies), ACLs on CreateBucket, PutObject, CopyObject and CreateMultipartUpload, and their
effect as S3 evaluates them: grants to another user by canonical id and to the AllUsers and
AuthenticatedUsers groups, objects owned by their writer, BucketOwnerEnforced (ACLs off),
BucketOwnerPreferred, and the public access block's BlockPublicAcls and IgnorePublicAcls.
Three callers: OWNER (a user who is not an admin, so its rights are a bucket owner's and no
more), THIRD (a user made for this module) and unsigned clients."""
import json
import uuid

import botocore
import pytest

import s3sign
from conftest import (OTHER_AK, OTHER_SK, admin, empty_and_delete, make_client, raises_s3,
                      raw_exchange, unique_bucket)

ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"
AUTHENTICATED = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"


@pytest.fixture(scope="module")
def owner(server):
    return make_client(server, OTHER_AK, OTHER_SK)


@pytest.fixture(scope="module")
def third(server):
    name = "acl-" + uuid.uuid4().hex[:8]
    made = json.loads(admin(server, "user", "create", name))
    return make_client(server, made["access_key"], made["secret_key"])


@pytest.fixture(scope="module")
def anonymous(server):
    return make_client(server, signature_version=botocore.UNSIGNED)


def canonical_id(client):
    return client.list_buckets()["Owner"]["ID"]


@pytest.fixture
def abucket(owner):
    name = unique_bucket("acl")
    owner.create_bucket(Bucket=name)
    yield name
    empty_and_delete(owner, name)


def grants_of(acl):
    """(grantee id or URI, permission) pairs of a Get*Acl answer."""
    out = set()
    for grant in acl["Grants"]:
        grantee = grant["Grantee"]
        out.add((grantee.get("ID") or grantee.get("URI"), grant["Permission"]))
    return out


def test_a_new_bucket_and_object_are_private_to_their_owner(owner, third, anonymous, abucket):
    me = canonical_id(owner)
    acl = owner.get_bucket_acl(Bucket=abucket)
    assert acl["Owner"]["ID"] == me
    assert acl["Owner"]["DisplayName"] == OTHER_AK
    assert grants_of(acl) == {(me, "FULL_CONTROL")}
    assert acl["Grants"][0]["Grantee"]["Type"] == "CanonicalUser"
    owner.put_object(Bucket=abucket, Key="k", Body=b"private")
    assert grants_of(owner.get_object_acl(Bucket=abucket, Key="k")) == {(me, "FULL_CONTROL")}
    for client in (third, anonymous):
        with raises_s3("AccessDenied", 403):
            client.get_object(Bucket=abucket, Key="k")
        with raises_s3("AccessDenied", 403):
            client.list_objects_v2(Bucket=abucket)
        with raises_s3("AccessDenied", 403):
            client.get_object_acl(Bucket=abucket, Key="k")


def test_public_read_object_is_readable_by_anyone_and_nothing_more(owner, third, anonymous,
                                                                   abucket):
    owner.put_object(Bucket=abucket, Key="public", Body=b"hello", ACL="public-read")
    owner.put_object(Bucket=abucket, Key="private", Body=b"secret")
    assert (ALL_USERS, "READ") in grants_of(owner.get_object_acl(Bucket=abucket, Key="public"))
    for client in (third, anonymous):
        assert client.get_object(Bucket=abucket, Key="public")["Body"].read() == b"hello"
        assert client.head_object(Bucket=abucket, Key="public")["ContentLength"] == 5
        with raises_s3("AccessDenied", 403):
            client.get_object(Bucket=abucket, Key="private")
        with raises_s3("AccessDenied", 403):
            client.put_object(Bucket=abucket, Key="public", Body=b"overwritten")
        with raises_s3("AccessDenied", 403):
            client.delete_object(Bucket=abucket, Key="public")
        with raises_s3("AccessDenied", 403):
            client.put_object_acl(Bucket=abucket, Key="public", ACL="public-read-write")
    # Made private again: gone for them.
    owner.put_object_acl(Bucket=abucket, Key="public", ACL="private")
    with raises_s3("AccessDenied", 403):
        anonymous.get_object(Bucket=abucket, Key="public")
    assert owner.get_object(Bucket=abucket, Key="public")["Body"].read() == b"hello"


def test_bucket_acls_grant_listing_and_writing(owner, third, anonymous, abucket):
    owner.put_object(Bucket=abucket, Key="listed", Body=b"x")
    with raises_s3("AccessDenied", 403):  # not yet listable: who may not list learns nothing
        anonymous.get_object(Bucket=abucket, Key="never-written")
    owner.put_bucket_acl(Bucket=abucket, ACL="public-read")
    assert (ALL_USERS, "READ") in grants_of(owner.get_bucket_acl(Bucket=abucket))
    keys = [o["Key"] for o in anonymous.list_objects_v2(Bucket=abucket)["Contents"]]
    assert keys == ["listed"]
    anonymous.head_bucket(Bucket=abucket)
    with raises_s3("AccessDenied", 403):
        anonymous.get_object(Bucket=abucket, Key="listed")  # listing is not reading
    # A key that does not exist: a caller who may list learns so, as S3 answers.
    with raises_s3("NoSuchKey", 404):
        anonymous.get_object(Bucket=abucket, Key="never-written")
    with raises_s3("AccessDenied", 403):
        anonymous.put_object(Bucket=abucket, Key="new", Body=b"x")
    with raises_s3("AccessDenied", 403):
        third.get_bucket_acl(Bucket=abucket)
    # WRITE to THIRD by canonical id, in a header: THIRD writes objects it then owns.
    third_id = canonical_id(third)
    owner.put_bucket_acl(Bucket=abucket, GrantWrite=f'id="{third_id}"',
                         GrantFullControl=f'id="{canonical_id(owner)}"')
    third.put_object(Bucket=abucket, Key="by-third", Body=b"third's")
    acl = third.get_object_acl(Bucket=abucket, Key="by-third")
    assert acl["Owner"]["ID"] == third_id
    assert grants_of(acl) == {(third_id, "FULL_CONTROL")}
    with raises_s3("AccessDenied", 403):
        third.list_objects_v2(Bucket=abucket)  # READ was not granted this time
    # The bucket owner's own rights cover its bucket's objects.
    assert owner.get_object(Bucket=abucket, Key="by-third")["Body"].read() == b"third's"
    third.delete_object(Bucket=abucket, Key="by-third")


def test_access_control_policy_bodies_grant_by_canonical_id(owner, third, anonymous, abucket):
    owner.put_object(Bucket=abucket, Key="k", Body=b"shared")
    me, them = canonical_id(owner), canonical_id(third)
    policy = {"Owner": {"ID": me},
              "Grants": [{"Grantee": {"Type": "CanonicalUser", "ID": me},
                          "Permission": "FULL_CONTROL"},
                         {"Grantee": {"Type": "CanonicalUser", "ID": them},
                          "Permission": "READ"},
                         {"Grantee": {"Type": "Group", "URI": AUTHENTICATED},
                          "Permission": "READ_ACP"}]}
    owner.put_object_acl(Bucket=abucket, Key="k", AccessControlPolicy=policy)
    acl = owner.get_object_acl(Bucket=abucket, Key="k")
    assert grants_of(acl) == {(me, "FULL_CONTROL"), (them, "READ"), (AUTHENTICATED, "READ_ACP")}
    names = {g["Grantee"].get("DisplayName") for g in acl["Grants"]}
    assert OTHER_AK in names
    assert third.get_object(Bucket=abucket, Key="k")["Body"].read() == b"shared"
    assert grants_of(third.get_object_acl(Bucket=abucket, Key="k")) == grants_of(acl)
    with raises_s3("AccessDenied", 403):
        anonymous.get_object_acl(Bucket=abucket, Key="k")
    with raises_s3("AccessDenied", 403):
        third.put_object_acl(Bucket=abucket, Key="k", ACL="public-read")
    # Another owner in the body is refused; so is an unknown user, an email grantee,
    # a malformed body, and a canned ACL beside grant headers. Nothing changes.
    for bad, code, status in [
        ({"Owner": {"ID": them}, "Grants": []}, "AccessDenied", 403),
        ({"Owner": {"ID": me}, "Grants": [{"Grantee": {"Type": "CanonicalUser", "ID": "f" * 64},
                                           "Permission": "READ"}]}, "InvalidArgument", 400),
        ({"Owner": {"ID": me},
          "Grants": [{"Grantee": {"Type": "AmazonCustomerByEmail",
                                  "EmailAddress": "someone@example.com"},
                      "Permission": "READ"}]}, "UnresolvableGrantByEmailAddress", 400),
    ]:
        with raises_s3(code, status):
            owner.put_object_acl(Bucket=abucket, Key="k", AccessControlPolicy=bad)
    with raises_s3("InvalidRequest", 400):
        owner.put_object_acl(Bucket=abucket, Key="k", ACL="private", GrantRead=f'id="{them}"')
    with raises_s3("InvalidArgument", 400):
        owner.put_object_acl(Bucket=abucket, Key="k", ACL="public")
    assert grants_of(owner.get_object_acl(Bucket=abucket, Key="k")) == grants_of(acl)


@pytest.mark.parametrize("body", [
    b"not xml",
    b"<AccessControlPolicy/>",
    b"<AccessControlPolicy><AccessControlList><Grant><Permission>READ</Permission></Grant>"
    b"</AccessControlList></AccessControlPolicy>",
    b"<AccessControlPolicy><AccessControlList><Grant><Grantee><URI>" + ALL_USERS.encode() +
    b"</URI></Grantee><Permission>OWN</Permission></Grant></AccessControlList>"
    b"</AccessControlPolicy>",
    b"",
])
def test_malformed_acl_bodies_change_nothing(server, owner, abucket, body):
    signer = s3sign.SigV4(OTHER_AK, OTHER_SK, server.region)
    request = s3sign.signed_request_bytes(signer, "PUT", server.netloc, f"/{abucket}",
                                          query=[("acl", "")], body=body)
    response = raw_exchange(server, request)
    assert response is not None
    assert (response.status, response.code) == (400, "MalformedACLError"), response
    assert len(owner.get_bucket_acl(Bucket=abucket)["Grants"]) == 1


def test_acls_on_create_bucket_copy_and_multipart(owner, third, anonymous):
    name = unique_bucket("acl")
    owner.create_bucket(Bucket=name, ACL="public-read")
    try:
        assert anonymous.list_objects_v2(Bucket=name)["KeyCount"] == 0
        owner.put_object(Bucket=name, Key="src", Body=b"source", ACL="public-read")
        # A copy takes the request's ACL (private by default), never the source's.
        owner.copy_object(Bucket=name, Key="copy", CopySource={"Bucket": name, "Key": "src"})
        with raises_s3("AccessDenied", 403):
            anonymous.get_object(Bucket=name, Key="copy")
        owner.copy_object(Bucket=name, Key="copy2", CopySource={"Bucket": name, "Key": "src"},
                          ACL="authenticated-read")
        assert third.get_object(Bucket=name, Key="copy2")["Body"].read() == b"source"
        with raises_s3("AccessDenied", 403):
            anonymous.get_object(Bucket=name, Key="copy2")
        # THIRD copies a public object out of a bucket it may not list: the source's ACL.
        dest = unique_bucket("acl")
        third.create_bucket(Bucket=dest)
        try:
            third.copy_object(Bucket=dest, Key="mine", CopySource={"Bucket": name, "Key": "src"})
            with raises_s3("AccessDenied", 403):
                third.copy_object(Bucket=dest, Key="no",
                                  CopySource={"Bucket": name, "Key": "copy"})
        finally:
            empty_and_delete(third, dest)
        upload = owner.create_multipart_upload(Bucket=name, Key="mp", ACL="public-read")
        part = owner.upload_part(Bucket=name, Key="mp", UploadId=upload["UploadId"],
                                 PartNumber=1, Body=b"m" * 10)
        owner.complete_multipart_upload(
            Bucket=name, Key="mp", UploadId=upload["UploadId"],
            MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
        assert anonymous.get_object(Bucket=name, Key="mp")["Body"].read() == b"m" * 10
    finally:
        empty_and_delete(owner, name)


def test_version_acls_by_version_id(owner, anonymous, abucket):
    owner.put_bucket_versioning(Bucket=abucket, VersioningConfiguration={"Status": "Enabled"})
    v1 = owner.put_object(Bucket=abucket, Key="k", Body=b"one", ACL="public-read")["VersionId"]
    v2 = owner.put_object(Bucket=abucket, Key="k", Body=b"two")["VersionId"]
    assert anonymous.get_object(Bucket=abucket, Key="k", VersionId=v1)["Body"].read() == b"one"
    with raises_s3("AccessDenied", 403):
        anonymous.get_object(Bucket=abucket, Key="k")  # the current one is private
    owner.put_object_acl(Bucket=abucket, Key="k", VersionId=v2, ACL="public-read")
    assert anonymous.get_object(Bucket=abucket, Key="k")["Body"].read() == b"two"
    owner.put_object_acl(Bucket=abucket, Key="k", VersionId=v1, ACL="private")
    with raises_s3("AccessDenied", 403):
        anonymous.get_object(Bucket=abucket, Key="k", VersionId=v1)
    resp = owner.get_object_acl(Bucket=abucket, Key="k", VersionId=v1)
    assert resp["ResponseMetadata"]["HTTPHeaders"]["x-amz-version-id"] == v1


def test_bucket_owner_enforced_turns_acls_off(owner, third, anonymous, abucket):
    enforced = {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}
    owner.put_object(Bucket=abucket, Key="was-public", Body=b"x", ACL="public-read")
    owner.put_bucket_acl(Bucket=abucket, ACL="public-read")
    # Not while the bucket's own ACL grants others anything.
    with raises_s3("InvalidBucketAclWithObjectOwnership", 400):
        owner.put_bucket_ownership_controls(Bucket=abucket, OwnershipControls=enforced)
    owner.put_bucket_acl(Bucket=abucket, ACL="private")
    owner.put_bucket_ownership_controls(Bucket=abucket, OwnershipControls=enforced)
    with raises_s3("AccessDenied", 403):
        anonymous.get_object(Bucket=abucket, Key="was-public")  # its grant counts no more
    with raises_s3("AccessDenied", 403):
        anonymous.list_objects_v2(Bucket=abucket)
    assert grants_of(owner.get_bucket_acl(Bucket=abucket)) == {(canonical_id(owner),
                                                                "FULL_CONTROL")}
    with raises_s3("AccessControlListNotSupported", 400):
        owner.put_object(Bucket=abucket, Key="k", Body=b"x", ACL="public-read")
    with raises_s3("AccessControlListNotSupported", 400):
        owner.put_bucket_acl(Bucket=abucket, ACL="public-read")
    owner.put_object(Bucket=abucket, Key="k", Body=b"x", ACL="bucket-owner-full-control")
    owner.put_bucket_acl(Bucket=abucket, ACL="private")
    # CreateBucket with an ACL and ACLs off.
    with raises_s3("InvalidBucketAclWithObjectOwnership", 400):
        owner.create_bucket(Bucket=unique_bucket("acl"), ACL="public-read",
                            ObjectOwnership="BucketOwnerEnforced")


def test_bucket_owner_preferred_takes_objects_written_with_full_control(owner, third, abucket):
    owner.put_bucket_ownership_controls(
        Bucket=abucket,
        OwnershipControls={"Rules": [{"ObjectOwnership": "BucketOwnerPreferred"}]})
    owner.put_bucket_acl(Bucket=abucket, GrantWrite=f'id="{canonical_id(third)}"',
                         GrantFullControl=f'id="{canonical_id(owner)}"')
    third.put_object(Bucket=abucket, Key="given", Body=b"x", ACL="bucket-owner-full-control")
    third.put_object(Bucket=abucket, Key="kept", Body=b"x")
    assert owner.get_object_acl(Bucket=abucket, Key="given")["Owner"]["ID"] == canonical_id(owner)
    assert owner.get_object_acl(Bucket=abucket, Key="kept")["Owner"]["ID"] == canonical_id(third)


def test_public_access_block_on_acls(owner, anonymous, abucket):
    owner.put_object(Bucket=abucket, Key="k", Body=b"x", ACL="public-read")
    owner.put_public_access_block(
        Bucket=abucket, PublicAccessBlockConfiguration={
            "BlockPublicAcls": False, "IgnorePublicAcls": True,
            "BlockPublicPolicy": False, "RestrictPublicBuckets": False})
    with raises_s3("AccessDenied", 403):
        anonymous.get_object(Bucket=abucket, Key="k")
    owner.put_public_access_block(
        Bucket=abucket, PublicAccessBlockConfiguration={
            "BlockPublicAcls": True, "IgnorePublicAcls": False,
            "BlockPublicPolicy": False, "RestrictPublicBuckets": False})
    assert anonymous.get_object(Bucket=abucket, Key="k")["Body"].read() == b"x"
    for call in (lambda: owner.put_object(Bucket=abucket, Key="k2", Body=b"x",
                                          ACL="public-read"),
                 lambda: owner.put_object_acl(Bucket=abucket, Key="k", ACL="authenticated-read"),
                 lambda: owner.put_bucket_acl(Bucket=abucket, ACL="public-read-write")):
        with raises_s3("AccessDenied", 403):
            call()
    owner.put_object(Bucket=abucket, Key="k3", Body=b"x", ACL="private")


def test_a_deleted_key_is_forbidden_to_those_who_may_not_list(owner, anonymous, abucket):
    owner.put_bucket_versioning(Bucket=abucket, VersioningConfiguration={"Status": "Enabled"})
    owner.put_object(Bucket=abucket, Key="gone", Body=b"x")
    owner.delete_object(Bucket=abucket, Key="gone")  # a delete marker is current
    read = {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
            "Resource": f"arn:aws:s3:::{abucket}/*"}
    owner.put_bucket_policy(Bucket=abucket, Policy=json.dumps(
        {"Version": "2012-10-17", "Statement": [read]}))
    with raises_s3("AccessDenied", 403):
        anonymous.get_object(Bucket=abucket, Key="gone")
    owner.put_bucket_acl(Bucket=abucket, ACL="public-read")  # now it may list
    with raises_s3("NoSuchKey", 404):
        anonymous.get_object(Bucket=abucket, Key="gone")
    owner.delete_bucket_policy(Bucket=abucket)
