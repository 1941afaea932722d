"""The cluster's bucket catalog, kept in etcd, with a real etcd and three real gateways:

  - A bucket created through gateway A is found at once through B and C (HeadBucket, and a
    PUT into it): on a local miss a gateway reads etcd (linearizable), so no waiting.
  - ListBuckets answers from each gateway's local mirror, which etcd's watch updates a few
    milliseconds after the change: through the other gateways it is polled, bounded.
  - The same name through B: BucketAlreadyOwnedByYou for its owner (the region here is not
    us-east-1, whose legacy answer is 200), BucketAlreadyExists for another user.
  - Versioning enabled through A is seen through B (the watch; polled, bounded).
  - DeleteBucket through C removes it everywhere: Head answers 404 through A and B.
  - A bucket policy put through A governs requests through B and C (their own requests
    and those forwarded to the keys' owners): an anonymous GET it grants works everywhere;
    deleted through C, it is refused everywhere.
  - An object's ACL and a version's legal hold, set through any gateway, hold on all.
  - A browser's form upload (POST Object) through any gateway lands on its key's owners
    (the gateway that reads the form forwards it, first bytes and all, to the owner),
    with the form's ACL; a form its policy refuses stores nothing anywhere.
  - A user made with `strata-admin user create` through A signs requests through B and C
    (on keys whichever gateway owns); the same access key cannot be made again through C;
    removed through B, it is refused (InvalidAccessKeyId) through all three.
One cluster serves the whole module (a few seconds to start).
"""
import json
import time

import botocore
import botocore.exceptions
import requests
import pytest

from conftest import OTHER_AK, OTHER_SK, StrataServer, admin, make_client, run_admin
from etcd import EtcdServer
from test_cluster import cluster_overrides

REGION = "eu-central-1"
# The watch delivers a change in milliseconds; this only bounds a broken one.
WATCH_BOUND = 10.0


@pytest.fixture(scope="module")
def gateways(tmp_path_factory):
    root = tmp_path_factory.mktemp("catalog")
    etcd = EtcdServer(root / "etcd").start()
    started = []
    try:
        for i, n in enumerate("abc", 1):
            overrides = cluster_overrides(etcd, f"gw-{n}", f"zone-{i}")
            overrides["server"] = {"region": REGION}
            started.append(StrataServer(root / f"gw-{n}", overrides).start())
        yield started
    finally:
        for gw in started:
            if gw.running():
                gw.stop()
        etcd.stop()


def code_of(call):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        call()
    return e.value.response["Error"]["Code"]


def names(s3):
    return {b["Name"] for b in s3.list_buckets()["Buckets"]}


def eventually(check, what, bound=WATCH_BOUND):
    deadline = time.monotonic() + bound
    while not check():
        assert time.monotonic() < deadline, f"{what} within {bound} s"
        time.sleep(0.02)


def test_a_bucket_made_through_one_gateway_is_everyones(gateways):
    a, b, c = (make_client(gw) for gw in gateways)
    a.create_bucket(Bucket="cat-shared",
                    CreateBucketConfiguration={"LocationConstraint": REGION})
    # At once: the lookup on a local miss reads etcd.
    b.head_bucket(Bucket="cat-shared")
    c.head_bucket(Bucket="cat-shared")
    c.put_object(Bucket="cat-shared", Key="k", Body=b"v")
    assert c.get_object(Bucket="cat-shared", Key="k")["Body"].read() == b"v"
    c.delete_object(Bucket="cat-shared", Key="k")
    assert "cat-shared" in names(a), "visible at once through the gateway that made it"
    # B and C found it above (and mirrored it); the watch would have brought it anyway.
    for s3 in (b, c):
        eventually(lambda: "cat-shared" in names(s3), "ListBuckets to show it")

    assert code_of(lambda: b.create_bucket(
        Bucket="cat-shared", CreateBucketConfiguration={"LocationConstraint": REGION})
    ) == "BucketAlreadyOwnedByYou"
    other = make_client(gateways[1], OTHER_AK, OTHER_SK)
    assert code_of(lambda: other.create_bucket(
        Bucket="cat-shared", CreateBucketConfiguration={"LocationConstraint": REGION})
    ) == "BucketAlreadyExists"


def test_listbuckets_through_other_gateways_follows_the_watch(gateways):
    a, b, c = (make_client(gw) for gw in gateways)
    a.create_bucket(Bucket="cat-listed",
                    CreateBucketConfiguration={"LocationConstraint": REGION})
    # No request through B or C named the bucket: only the watch brings it there.
    for s3 in (b, c):
        eventually(lambda: "cat-listed" in names(s3), "the watch to bring the bucket")


def test_versioning_set_through_one_gateway_is_seen_through_another(gateways):
    a, b, _ = (make_client(gw) for gw in gateways)
    a.create_bucket(Bucket="cat-versioned",
                    CreateBucketConfiguration={"LocationConstraint": REGION})
    a.put_bucket_versioning(Bucket="cat-versioned",
                            VersioningConfiguration={"Status": "Enabled"})
    eventually(lambda: b.get_bucket_versioning(Bucket="cat-versioned").get("Status") ==
               "Enabled", "versioning to reach B")
    b.put_bucket_tagging(Bucket="cat-versioned",
                         Tagging={"TagSet": [{"Key": "team", "Value": "b"}]})
    eventually(lambda: a.get_bucket_tagging(Bucket="cat-versioned")["TagSet"] ==
               [{"Key": "team", "Value": "b"}], "tags to reach A")


def test_delete_through_one_gateway_removes_it_everywhere(gateways):
    a, b, c = (make_client(gw) for gw in gateways)
    a.create_bucket(Bucket="cat-doomed",
                    CreateBucketConfiguration={"LocationConstraint": REGION})
    b.head_bucket(Bucket="cat-doomed")
    c.delete_bucket(Bucket="cat-doomed")
    assert code_of(lambda: c.head_bucket(Bucket="cat-doomed")) == "404"
    for s3 in (a, b):
        eventually(lambda: "cat-doomed" not in names(s3), "the removal to reach every mirror")
        assert code_of(lambda: s3.head_bucket(Bucket="cat-doomed")) == "404"
    # The name is free again, cluster-wide.
    b.create_bucket(Bucket="cat-doomed",
                    CreateBucketConfiguration={"LocationConstraint": REGION})
    a.head_bucket(Bucket="cat-doomed")


def test_a_policy_put_through_one_gateway_governs_every_gateway(gateways):
    a, b, c = (make_client(gw) for gw in gateways)
    a.create_bucket(Bucket="cat-public",
                    CreateBucketConfiguration={"LocationConstraint": REGION})
    keys = [f"k{i}" for i in range(12)]  # owned by each of the three gateways
    for key in keys:
        a.put_object(Bucket="cat-public", Key=key, Body=key.encode())

    def anonymous_reads(gw):
        return [requests.get(f"{gw.endpoint}/cat-public/{key}", timeout=30).status_code
                for key in keys]

    assert all(s == 403 for gw in gateways for s in anonymous_reads(gw))
    a.put_bucket_policy(Bucket="cat-public", Policy=json.dumps({"Statement": [{
        "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
        "Resource": "arn:aws:s3:::cat-public/*"}]}))
    for gw in gateways:
        eventually(lambda: all(s == 200 for s in anonymous_reads(gw)),
                   f"the policy to reach {gw.endpoint} and the keys' owners")
    unsigned = make_client(gateways[2], signature_version=botocore.UNSIGNED)
    assert unsigned.get_object(Bucket="cat-public", Key="k3")["Body"].read() == b"k3"
    assert json.loads(b.get_bucket_policy(Bucket="cat-public")["Policy"])["Statement"]
    c.delete_bucket_policy(Bucket="cat-public")
    for gw in gateways:
        eventually(lambda: all(s == 403 for s in anonymous_reads(gw)),
                   f"the removal to reach {gw.endpoint}")


def test_acls_and_locks_hold_on_every_gateway(gateways):
    """An object's ACL and a version's lock are kept by the key's owners, whichever gateway
    set them: an anonymous read a public-read ACL grants works through every gateway; a
    legal hold set through B refuses a removal through C."""
    a, b, c = (make_client(gw) for gw in gateways)
    a.create_bucket(Bucket="cat-acl", ObjectLockEnabledForBucket=True,
                    CreateBucketConfiguration={"LocationConstraint": REGION})
    keys = [f"k{i}" for i in range(12)]  # owned by each of the three gateways
    versions = {}
    for i, key in enumerate(keys):
        versions[key] = (a, b, c)[i % 3].put_object(
            Bucket="cat-acl", Key=key, Body=key.encode(), ACL="public-read")["VersionId"]
    for gw in gateways:
        for key in keys:
            r = requests.get(f"{gw.endpoint}/cat-acl/{key}", timeout=30)
            assert (r.status_code, r.content) == (200, key.encode()), (gw.endpoint, key)
    for key in keys:
        b.put_object_legal_hold(Bucket="cat-acl", Key=key, VersionId=versions[key],
                                LegalHold={"Status": "ON"})
        assert code_of(lambda: c.delete_object(Bucket="cat-acl", Key=key,
                                               VersionId=versions[key])) == "AccessDenied"
        c.put_object_acl(Bucket="cat-acl", Key=key, VersionId=versions[key], ACL="private")
        assert requests.get(f"{gateways[0].endpoint}/cat-acl/{key}", timeout=30).status_code == 403
        assert a.get_object_legal_hold(Bucket="cat-acl", Key=key)["LegalHold"]["Status"] == "ON"
        a.put_object_legal_hold(Bucket="cat-acl", Key=key, VersionId=versions[key],
                                LegalHold={"Status": "OFF"})
        b.delete_object(Bucket="cat-acl", Key=key, VersionId=versions[key])
    c.delete_bucket(Bucket="cat-acl")


def test_browser_form_uploads_through_any_gateway(gateways):
    from test_post_object import post, presigned
    a, b, c = (make_client(gw) for gw in gateways)
    a.create_bucket(Bucket="cat-forms", CreateBucketConfiguration={"LocationConstraint": REGION})
    keys = [f"form/{i}" for i in range(9)]  # each gateway reads forms for keys others own
    bodies = {}
    for i, key in enumerate(keys):
        gw, client = gateways[i % 3], (a, b, c)[i % 3]
        # Over a forwarding chunk and a block: the forwarded form goes in several pieces.
        bodies[key] = bytes([i]) * (300_000 + i * 4099)
        fields = presigned(client, "cat-forms", key, {"acl": "public-read"},
                           [{"acl": "public-read"}, ["content-length-range", 1, 1 << 20]])
        got = post(gw, "cat-forms", fields, ("f.bin", "application/octet-stream", bodies[key]))
        assert got.status == 204, (gw.endpoint, key, got)
    for gw, client in zip(gateways, (a, b, c)):
        for key in keys:
            assert client.get_object(Bucket="cat-forms", Key=key)["Body"].read() == bodies[key]
            r = requests.get(f"{gw.endpoint}/cat-forms/{key}", timeout=30)  # the form's ACL
            assert (r.status_code, len(r.content)) == (200, len(bodies[key])), (gw.endpoint, key)
    # Too large for its policy, through each gateway (two of which forward it): refused as
    # the file streams, and nothing is stored on any gateway.
    for gw, client in zip(gateways, (a, b, c)):
        fields = presigned(client, "cat-forms", "form/big",
                           conditions=[["content-length-range", 1, 1000]])
        got = post(gw, "cat-forms", fields, ("big", "text/plain", b"x" * 300_000))
        assert (got.status, got.code) == (400, "EntityTooLarge"), (gw.endpoint, got)
    for client in (a, b, c):
        assert code_of(lambda: client.head_object(Bucket="cat-forms", Key="form/big")) == "404"
    for key in keys:
        c.delete_object(Bucket="cat-forms", Key=key)
    b.delete_bucket(Bucket="cat-forms")


def test_a_user_made_through_one_gateway_signs_everywhere(gateways):
    from test_admin import parse_credentials
    a, b, c = gateways
    ak, sk = parse_credentials(admin(a, "user", "create", "cluster-user-1"))
    # Mirrored through etcd's watch: within milliseconds on B and C.
    for gw in (b, c):
        eventually(lambda: ak in admin(gw, "user", "list"), f"{ak} listed through {gw.port}")
    bucket = "users-everywhere"
    make_client(b, ak, sk).create_bucket(Bucket=bucket)
    for i, gw in enumerate(gateways):
        user = make_client(gw, ak, sk)
        for k in range(6):  # keys of every owner
            user.put_object(Bucket=bucket, Key=f"{i}/{k}", Body=b"by the new user")
    for gw in gateways:
        user = make_client(gw, ak, sk)
        assert user.list_objects_v2(Bucket=bucket)["KeyCount"] == 18
        assert user.get_object(Bucket=bucket, Key="2/5")["Body"].read() == b"by the new user"

    res = run_admin(c.config_path, "user", "create", "cluster-user-1")
    assert res.returncode != 0, res.stdout
    assert "exists" in (res.stdout + res.stderr).lower(), res

    user = make_client(a, ak, sk)
    for i in range(3):
        for k in range(6):
            user.delete_object(Bucket=bucket, Key=f"{i}/{k}")
    user.delete_bucket(Bucket=bucket)
    admin(b, "user", "delete", ak)

    def refused(gw):
        try:
            make_client(gw, ak, sk).list_buckets()
            return False
        except botocore.exceptions.ClientError as e:
            return e.response["Error"]["Code"] == "InvalidAccessKeyId"
    for gw in gateways:
        eventually(lambda: refused(gw), f"{ak} refused through {gw.port}")
