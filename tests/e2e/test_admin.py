"""strata-admin --config FILE user create NAME / list / delete NAME against a running server.

`user create` prints the new credentials as JSON ({"access_key": ..., "secret_key": ...});
parse_credentials also accepts "access key: X" / "secret_key = Y" lines.
"""
import json
import re
import uuid

import pytest
import requests

import s3sign
from conftest import (ADMIN_SK, OTHER_AK, OTHER_SK, admin, make_client, raises_s3, run_admin,
                      raw_exchange, unique_bucket)


def _find_json_creds(obj):
    if isinstance(obj, dict):
        lowered = {re.sub(r"[^a-z]", "", k.lower()): v for k, v in obj.items()}
        ak = lowered.get("accesskey") or lowered.get("accesskeyid")
        sk = lowered.get("secretkey") or lowered.get("secretaccesskey")
        if isinstance(ak, str) and isinstance(sk, str):
            return ak, sk
        for v in obj.values():
            found = _find_json_creds(v)
            if found:
                return found
    if isinstance(obj, list):
        for v in obj:
            found = _find_json_creds(v)
            if found:
                return found
    return None


def parse_credentials(text):
    with_json = text.strip()
    if with_json.startswith(("{", "[")):
        try:
            found = _find_json_creds(json.loads(with_json))
        except ValueError:
            found = None
        if found:
            return found
    ak = re.search(r"access[ _-]?key(?:[ _-]?id)?\W+([A-Za-z0-9+/=_.-]{3,})", text, re.I)
    sk = re.search(r"secret(?:[ _-]?access)?[ _-]?key\W+([A-Za-z0-9+/=_.-]{8,})", text, re.I)
    assert ak and sk, f"cannot find an access key and a secret key in:\n{text}"
    return ak.group(1), sk.group(1)


def listed_keys(srv):
    return admin(srv, "user", "list")


@pytest.fixture
def admin_server(strata_factory):
    return strata_factory(name="admin")


def test_user_create_list_delete(admin_server):
    srv = admin_server
    before = listed_keys(srv)
    assert "strata" in before and OTHER_AK in before, before
    assert ADMIN_SK not in before and OTHER_SK not in before, "user list must not show secrets"

    name = "e2e-" + uuid.uuid4().hex[:10]
    ak, sk = parse_credentials(admin(srv, "user", "create", name))
    assert ak == name and sk and ak != sk
    listing = listed_keys(srv)
    assert ak in listing, listing
    assert sk not in listing, "user list must not show secrets"

    user = make_client(srv, ak, sk)
    name = unique_bucket("admin")
    user.create_bucket(Bucket=name)
    user.put_object(Bucket=name, Key="k", Body=b"made by a new user")
    assert user.get_object(Bucket=name, Key="k")["Body"].read() == b"made by a new user"
    user.delete_object(Bucket=name, Key="k")
    user.delete_bucket(Bucket=name)

    admin(srv, "user", "delete", ak)
    assert ak not in listed_keys(srv)
    with raises_s3("InvalidAccessKeyId", 403):
        make_client(srv, ak, sk).list_buckets()
    # The bootstrap users are untouched.
    make_client(srv).list_buckets()
    make_client(srv, OTHER_AK, OTHER_SK).list_buckets()

    # No secret ever reaches the server's log.
    logs = srv.logs()
    for secret in (sk, ADMIN_SK, OTHER_SK):
        assert secret not in logs, f"a secret key appears in the server log:\n{logs}"


def test_created_user_survives_restart(admin_server):
    srv = admin_server
    ak, sk = parse_credentials(admin(srv, "user", "create", "e2e-restart"))
    srv.restart()
    make_client(srv, ak, sk).list_buckets()
    admin(srv, "user", "delete", ak)
    srv.restart()
    with raises_s3("InvalidAccessKeyId", 403):
        make_client(srv, ak, sk).list_buckets()


def test_delete_unknown_user_fails(admin_server):
    res = run_admin(admin_server.config_path, "user", "delete", "NO-SUCH-USER-KEY")
    assert res.returncode != 0
    assert "NO-SUCH-USER-KEY" in res.stdout + res.stderr


def test_admin_with_server_down_fails_cleanly(admin_server):
    admin_server.stop()
    res = run_admin(admin_server.config_path, "user", "list", timeout=60)
    assert res.returncode != 0
    assert "Traceback" not in res.stderr and "terminate called" not in res.stderr


def test_admin_api_needs_an_admin(admin_server):
    srv = admin_server
    # Anonymous.
    r = requests.get(f"{srv.endpoint}/_strata/admin/users", timeout=30)
    assert r.status_code == 403, r.text
    # Signed by a valid, non-admin user.
    signer = s3sign.SigV4(OTHER_AK, OTHER_SK, srv.region)
    resp = raw_exchange(srv, s3sign.signed_request_bytes(signer, "GET", srv.netloc,
                                                         "/_strata/admin/users"))
    assert resp is not None and resp.status == 403, resp
    assert resp.code == "AccessDenied", resp
    assert OTHER_SK.encode() not in resp.body and ADMIN_SK.encode() not in resp.body


def test_key_rotation_keeps_the_user_and_what_it_owns(admin_server):
    """A user's keys are added and removed while it, its canonical id, its buckets and its
    objects' ACLs stay; `user admin` makes it an admin or not."""
    srv = admin_server
    name = "e2e-rot-" + uuid.uuid4().hex[:8]
    first = json.loads(admin(srv, "user", "create", name))
    assert first["user"] == name and first["access_key"] == name
    old = make_client(srv, first["access_key"], first["secret_key"])
    owner_id = old.list_buckets()["Owner"]["ID"]
    bucket = unique_bucket("rot")
    old.create_bucket(Bucket=bucket)
    old.put_object(Bucket=bucket, Key="k", Body=b"kept", ACL="public-read")

    second = json.loads(admin(srv, "user", "key", "add", name))
    assert second["user"] == name and second["access_key"] != name
    listing = json.loads(admin(srv, "user", "list"))
    assert {(u["user"], u["access_key"]) for u in listing if u["user"] == name} == {
        (name, name), (name, second["access_key"])}
    assert second["secret_key"] not in json.dumps(listing)
    new = make_client(srv, second["access_key"], second["secret_key"])
    assert new.list_buckets()["Owner"]["ID"] == owner_id
    assert new.get_object(Bucket=bucket, Key="k")["Body"].read() == b"kept"
    assert new.get_object_acl(Bucket=bucket, Key="k")["Owner"]["ID"] == owner_id

    admin(srv, "user", "key", "remove", name, name)
    with raises_s3("InvalidAccessKeyId", 403):
        old.list_buckets()
    assert bucket in [b["Name"] for b in new.list_buckets()["Buckets"]]
    res = run_admin(srv.config_path, "user", "key", "remove", name, "NOT-ITS-KEY")
    assert res.returncode != 0

    # Admin or not, for every key of the user.
    signer = s3sign.SigV4(second["access_key"], second["secret_key"], srv.region)
    resp = raw_exchange(srv, s3sign.signed_request_bytes(signer, "GET", srv.netloc,
                                                         "/_strata/admin/users"))
    assert resp is not None and resp.status == 403, resp
    admin(srv, "user", "admin", name, "true")
    resp = raw_exchange(srv, s3sign.signed_request_bytes(signer, "GET", srv.netloc,
                                                         "/_strata/admin/users"))
    assert resp is not None and resp.status == 200, resp
    admin(srv, "user", "admin", name, "false")
    resp = raw_exchange(srv, s3sign.signed_request_bytes(signer, "GET", srv.netloc,
                                                         "/_strata/admin/users"))
    assert resp is not None and resp.status == 403, resp

    new.delete_object(Bucket=bucket, Key="k")
    new.delete_bucket(Bucket=bucket)
    admin(srv, "user", "delete", name)
    with raises_s3("InvalidAccessKeyId", 403):
        new.list_buckets()
