"""POST Object: browser-based uploads with multipart/form-data against the real server.

Forms signed by boto3's generate_presigned_post (SigV4) and by hand (SigV2, with Python's
hmac), unsigned (anonymous) forms, curl -F, and headless Chromium on another origin
posting a FormData. Checks S3's answers: 204 / 200 / 201 with its PostResponse XML, the
303 redirect, the policy's conditions (exact, starts-with, content-length-range counted as
the file streams, extra fields, expiry), signatures, the form's object description read
back with boto3 (Content-Type, x-amz-meta-*, tagging), a multi-MiB file byte for byte, and
that a refused upload leaves no object and no data file behind."""
import base64
import datetime
import hashlib
import hmac
import http.client
import json
import os
import re
import subprocess
import time
import uuid
import zlib

import botocore
import pytest

from conftest import (OTHER_AK, RawConn, make_client, raises_s3, raw_exchange, unique_bucket,
                      xml_code)
from require import require_tool
import s3sign
import test_cors
from test_virtual_host import DOMAIN, loopback_domain, virtual_client  # noqa: F401 (fixture)

TAGGING = ("<Tagging><TagSet><Tag><Key>team</Key><Value>ml</Value></Tag>"
           "<Tag><Key>stage</Key><Value>raw data</Value></Tag></TagSet></Tagging>")


def form_body(fields, file=("upload.bin", "application/octet-stream", b""), boundary=None,
              after=()):
    """A multipart/form-data body: `fields` (name, value) in order, then the file part
    (filename, content type, bytes; None for no file), then `after` fields."""
    boundary = boundary or "----strata" + uuid.uuid4().hex
    out = []
    for name, value in fields:
        out.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                   .encode() + (value if isinstance(value, bytes) else value.encode()) + b"\r\n")
    if file is not None:
        name, ctype, data = file
        out.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
                   f'filename="{name}"\r\nContent-Type: {ctype}\r\n\r\n'.encode() + data +
                   b"\r\n")
    for name, value in after:
        out.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                   f'{value}\r\n'.encode())
    out.append(f"--{boundary}--\r\n".encode())
    return b"".join(out), f"multipart/form-data; boundary={boundary}"


class Answer:
    def __init__(self, resp):
        self.status = resp.status
        self.headers = {k.lower(): v for k, v in resp.getheaders()}
        self.body = resp.read()
        self.code = xml_code(self.body)

    def __repr__(self):
        return f"Answer({self.status}, {self.headers}, {self.body[:500]!r})"


def post(server, bucket, fields, file=("upload.bin", "application/octet-stream", b""),
         content_type=None, headers=None, after=()):
    body, form_type = form_body(fields, file, after=after)
    conn = http.client.HTTPConnection(server.host, server.port, timeout=60)
    try:
        try:
            conn.request("POST", f"/{bucket}", body=body,
                         headers={"Content-Type": content_type or form_type, **(headers or {})})
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before the whole body was sent: the answer is waiting
        return Answer(conn.getresponse())
    finally:
        conn.close()


def presigned(client, bucket, key, fields=None, conditions=None, expires=300):
    """boto3's form for `key`: (fields as a list, in the order boto3 gives them)."""
    form = client.generate_presigned_post(Bucket=bucket, Key=key, Fields=fields,
                                          Conditions=conditions, ExpiresIn=expires)
    assert form["url"].endswith(f"/{bucket}"), form["url"]
    return list(form["fields"].items())


def replaced(fields, name, value):
    return [(n, value if n == name else v) for n, v in fields]


def resigned(server, fields):
    """`fields` with x-amz-signature computed again for their policy (Python's hmac)."""
    values = dict(fields)
    key = s3sign.signing_key(server.secret_key, values["x-amz-date"][:8], server.region)
    return replaced(fields, "x-amz-signature",
                    hmac.new(key, values["policy"].encode(), hashlib.sha256).hexdigest())


def data_files(server):
    root = server.workdir / "data"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()
                  and "hot" in p.parts and p.suffix not in (".log",))


def object_missing(s3, bucket, key):
    with raises_s3("404", 404):
        s3.head_object(Bucket=bucket, Key=key)
    return True


def test_presigned_post_answers_201_with_its_document(server, s3, bucket):
    fields = presigned(s3, bucket, "docs/a.txt", {"success_action_status": "201"},
                       [{"success_action_status": "201"}])
    got = post(server, bucket, fields, ("a.txt", "text/plain", b"hello, form"))
    assert got.status == 201, got
    etag = '"' + hashlib.md5(b"hello, form").hexdigest() + '"'
    body = got.body.decode()
    assert "<PostResponse>" in body and f"<Bucket>{bucket}</Bucket>" in body
    assert "<Key>docs/a.txt</Key>" in body
    assert re.search(r"<ETag>(&quot;|\")" + etag.strip('"') + r"(&quot;|\")</ETag>", body), body
    assert f"<Location>{server.endpoint}/{bucket}/docs/a.txt</Location>" in body
    assert got.headers["etag"] == etag
    obj = s3.get_object(Bucket=bucket, Key="docs/a.txt")
    assert obj["Body"].read() == b"hello, form"
    assert obj["ETag"] == etag
    # S3 ignores the file part's own type: the Content-Type field decides.
    assert obj["ContentType"] == "binary/octet-stream"


def test_default_204_and_200(server, s3, bucket):
    got = post(server, bucket, presigned(s3, bucket, "plain"), ("p", "text/plain", b"x" * 10))
    assert (got.status, got.body) == (204, b""), got
    assert got.headers["etag"] == '"' + hashlib.md5(b"x" * 10).hexdigest() + '"'
    assert got.headers["location"] == f"{server.endpoint}/{bucket}/plain"
    fields = presigned(s3, bucket, "two", {"success_action_status": "200"},
                       [{"success_action_status": "200"}])
    assert post(server, bucket, fields, ("p", "text/plain", b"y")).status == 200
    # An unknown status is 204, as in S3.
    fields = presigned(s3, bucket, "three", {"success_action_status": "302"},
                       [{"success_action_status": "302"}])
    assert post(server, bucket, fields, ("p", "text/plain", b"z")).status == 204
    assert s3.get_object(Bucket=bucket, Key="three")["Body"].read() == b"z"


def test_redirect_appends_bucket_key_and_etag(server, s3, bucket):
    target = "http://app.example.com/done?from=form"
    fields = presigned(s3, bucket, "dir/r k.txt", {"success_action_redirect": target},
                       [{"success_action_redirect": target}])
    got = post(server, bucket, fields, ("r.txt", "text/plain", b"redirected"))
    assert got.status == 303, got
    etag = hashlib.md5(b"redirected").hexdigest()
    assert got.headers["location"] == (f"{target}&bucket={bucket}&key=dir%2Fr%20k.txt"
                                       f"&etag=%22{etag}%22"), got.headers
    assert s3.get_object(Bucket=bucket, Key="dir/r k.txt")["Body"].read() == b"redirected"
    # The older `redirect` field, without a query of its own.
    fields = presigned(s3, bucket, "r2", {"redirect": "https://x.example/ok"},
                       [{"redirect": "https://x.example/ok"}])
    got = post(server, bucket, fields, ("r.txt", "text/plain", b"2"))
    assert got.status == 303 and got.headers["location"].startswith(
        f"https://x.example/ok?bucket={bucket}&key=r2&etag=%22"), got


def test_filename_variable_and_description_read_back(server, s3, bucket):
    extra = {"Content-Type": "image/png", "x-amz-meta-color": "red", "X-Amz-Meta-Size": "big",
             "Cache-Control": "max-age=60", "Content-Disposition": "inline",
             "tagging": TAGGING}
    conditions = [["starts-with", "$Content-Type", "image/"], {"x-amz-meta-color": "red"},
                  ["starts-with", "$x-amz-meta-size", ""], {"Cache-Control": "max-age=60"},
                  {"Content-Disposition": "inline"}, {"tagging": TAGGING}]
    fields = presigned(s3, bucket, "photos/${filename}", extra, conditions)
    got = post(server, bucket, fields, ("cat.png", "application/x-whatever", b"\x89PNG..."))
    assert got.status == 204, got
    head = s3.head_object(Bucket=bucket, Key="photos/cat.png")
    assert head["ContentType"] == "image/png"
    assert head["Metadata"] == {"color": "red", "size": "big"}
    assert head["CacheControl"] == "max-age=60"
    assert head["ContentDisposition"] == "inline"
    tags = s3.get_object_tagging(Bucket=bucket, Key="photos/cat.png")["TagSet"]
    assert sorted((t["Key"], t["Value"]) for t in tags) == [("stage", "raw data"), ("team", "ml")]


def test_policy_conditions_refuse_and_leave_nothing(server, s3, bucket):
    before = data_files(server)
    base = presigned(s3, bucket, "in/${filename}")
    # A field no condition names.
    got = post(server, bucket, base + [("x-amz-meta-extra", "1")], ("f", "text/plain", b"x"))
    assert (got.status, got.code) == (403, "AccessDenied"), got
    assert b"Invalid according to Policy: Extra input fields: x-amz-meta-extra" in got.body
    # The key outside the policy's prefix.
    got = post(server, bucket, replaced(base, "key", "out/${filename}"),
               ("f", "text/plain", b"x"))
    assert (got.status, got.code) == (403, "AccessDenied"), got
    assert (b"Invalid according to Policy: Policy Condition failed: "
            b"[&quot;starts-with&quot;, &quot;$key&quot;, &quot;in/&quot;]") in got.body, got
    # content-length-range, counted on the file as it arrives.
    ranged = presigned(s3, bucket, "sized", conditions=[["content-length-range", 5, 1000]])
    got = post(server, bucket, ranged, ("f", "text/plain", b"y" * 1001))
    assert (got.status, got.code) == (400, "EntityTooLarge"), got
    assert b"<MaxSizeAllowed>1000</MaxSizeAllowed>" in got.body
    big = os.urandom(3 << 20)  # far past the range: refused while it streams
    got = post(server, bucket, ranged, ("f", "text/plain", big))
    assert (got.status, got.code) == (400, "EntityTooLarge"), got
    got = post(server, bucket, ranged, ("f", "text/plain", b"1234"))
    assert (got.status, got.code) == (400, "EntityTooSmall"), got
    assert b"<MinSizeAllowed>5</MinSizeAllowed>" in got.body
    # Nothing of the refused uploads remains: no object, no data file.
    assert object_missing(s3, bucket, "out/f") and object_missing(s3, bucket, "sized")
    assert data_files(server) == before

    # x-ignore- fields need no condition; a size inside the range passes.
    got = post(server, bucket, base + [("x-ignore-note", "1")], ("ok.txt", "text/plain", b"x"))
    assert got.status == 204, got
    assert post(server, bucket, ranged, ("f", "text/plain", b"12345")).status == 204
    assert s3.get_object(Bucket=bucket, Key="sized")["Body"].read() == b"12345"
    assert s3.get_object(Bucket=bucket, Key="in/ok.txt")["Body"].read() == b"x"


def test_expired_policy_and_bad_signatures(server, s3, bucket):
    fields = presigned(s3, bucket, "late", expires=-5)
    got = post(server, bucket, fields, ("f", "text/plain", b"x"))
    assert (got.status, got.code) == (403, "AccessDenied"), got
    assert b"Invalid according to Policy: Policy expired." in got.body
    fields = presigned(s3, bucket, "forged")
    sig = dict(fields)["x-amz-signature"]
    forged = replaced(fields, "x-amz-signature", ("0" if sig[0] != "0" else "1") + sig[1:])
    got = post(server, bucket, forged, ("f", "text/plain", b"x"))
    assert (got.status, got.code) == (403, "SignatureDoesNotMatch"), got
    # The policy changed after signing (a wider prefix): its signature no longer holds.
    policy = json.loads(base64.b64decode(dict(fields)["policy"]))
    policy["conditions"] = [c for c in policy["conditions"] if c != {"key": "forged"}]
    policy["conditions"].append(["starts-with", "$key", ""])
    widened = replaced(fields, "policy", base64.b64encode(json.dumps(policy).encode()).decode())
    got = post(server, bucket, widened, ("f", "text/plain", b"x"))
    assert (got.status, got.code) == (403, "SignatureDoesNotMatch"), got
    unknown = make_client(server, "AKIDNOSUCHUSER", "nosuchsecret")
    got = post(server, bucket, presigned(unknown, bucket, "x"), ("f", "text/plain", b"x"))
    assert (got.status, got.code) == (403, "InvalidAccessKeyId"), got
    assert object_missing(s3, bucket, "forged")


def sigv2_form(access_key, secret_key, bucket, key_prefix, extra_conditions=()):
    expiration = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=5))
    policy = {"expiration": expiration.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
              "conditions": [{"bucket": bucket}, ["starts-with", "$key", key_prefix],
                             *extra_conditions]}
    encoded = base64.b64encode(json.dumps(policy).encode()).decode()
    signature = base64.b64encode(
        hmac.new(secret_key.encode(), encoded.encode(), hashlib.sha1).digest()).decode()
    return [("AWSAccessKeyId", access_key), ("policy", encoded), ("signature", signature)]


def test_sigv2_form(server, s3, bucket):
    fields = [("key", "v2/${filename}")] + sigv2_form(server.access_key, server.secret_key,
                                                      bucket, "v2/")
    got = post(server, bucket, fields, ("two.txt", "text/plain", b"signed with v2"))
    assert got.status == 204, got
    assert s3.get_object(Bucket=bucket, Key="v2/two.txt")["Body"].read() == b"signed with v2"
    wrong = [("key", "v2/x")] + sigv2_form(server.access_key, "not-the-secret", bucket, "v2/")
    got = post(server, bucket, wrong, ("two.txt", "text/plain", b"x"))
    assert (got.status, got.code) == (403, "SignatureDoesNotMatch"), got


def test_multi_mib_file_is_byte_exact(server, s3, bucket):
    data = os.urandom((6 << 20) + 12345)
    fields = presigned(s3, bucket, "big.bin", conditions=[["content-length-range", 1, 8 << 20]])
    got = post(server, bucket, fields, ("big.bin", "application/octet-stream", data))
    assert got.status == 204, got
    body = s3.get_object(Bucket=bucket, Key="big.bin")["Body"].read()
    assert hashlib.sha256(body).hexdigest() == hashlib.sha256(data).hexdigest()
    assert got.headers["etag"] == '"' + hashlib.md5(data).hexdigest() + '"'


def test_the_form_signer_is_the_caller(server, s3, s3_other, bucket):
    """The object is written as whom the form proves, never as the request's headers or
    anyone else: an unsigned form is anonymous, another user's form needs a grant."""
    unsigned = [("key", "anon/a.txt")]
    got = post(server, bucket, unsigned, ("a.txt", "text/plain", b"anon"))
    assert (got.status, got.code) == (403, "AccessDenied"), got
    # An admin's signed request head does not make an unsigned form the admin's.
    body, ctype = form_body(unsigned, ("a.txt", "text/plain", b"anon"))
    got = raw_exchange(server, s3sign.signed_request_bytes(
        s3sign.SigV4(server.access_key, server.secret_key, server.region), "POST",
        server.netloc, f"/{bucket}", body=body, extra_headers={"content-type": ctype}))
    assert (got.status, got.code) == (403, "AccessDenied"), got
    # Another user's signed form, in a bucket that user may not write.
    got = post(server, bucket, presigned(s3_other, bucket, "other/a.txt"),
               ("a.txt", "text/plain", b"other"))
    assert (got.status, got.code) == (403, "AccessDenied"), got
    assert object_missing(s3, bucket, "anon/a.txt") and object_missing(s3, bucket, "other/a.txt")

    s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Statement": [
        {"Effect": "Allow", "Principal": "*", "Action": "s3:PutObject",
         "Resource": f"arn:aws:s3:::{bucket}/anon/*"},
        {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam:::user/{OTHER_AK}"},
         "Action": "s3:PutObject", "Resource": f"arn:aws:s3:::{bucket}/other/*"}]}))
    assert post(server, bucket, unsigned, ("a.txt", "text/plain", b"anon")).status == 204
    got = post(server, bucket, [("key", "elsewhere/a.txt")], ("a.txt", "text/plain", b"x"))
    assert (got.status, got.code) == (403, "AccessDenied"), got
    got = post(server, bucket, presigned(s3_other, bucket, "other/a.txt"),
               ("a.txt", "text/plain", b"other"))
    assert got.status == 204, got
    assert s3.get_object(Bucket=bucket, Key="anon/a.txt")["Body"].read() == b"anon"
    assert s3.get_object(Bucket=bucket, Key="other/a.txt")["Body"].read() == b"other"
    assert object_missing(s3, bucket, "elsewhere/a.txt")


@pytest.mark.parametrize("case,status,code", [
    ("not_a_form", 412, "PreconditionFailed"),
    ("no_key", 400, "InvalidArgument"),
    ("no_file", 400, "IncorrectNumberOfFilesInPostRequest"),
    ("fields_too_large", 400, "MaxPostPreDataLengthExceededError"),
    ("bad_policy", 400, "InvalidPolicyDocument"),
    ("policy_unsigned", 400, "InvalidArgument"),
    ("acl_unknown", 400, "InvalidArgument"),
    ("field_twice", 400, "InvalidArgument"),
    ("bad_tagging", 400, "MalformedXML"),
    ("too_many_tags", 400, "BadRequest"),
    ("header_in_metadata", 400, "InvalidArgument"),
    ("bad_md5", 400, "BadDigest"),
])
def test_bad_forms_get_s3_errors(server, s3, bucket, case, status, code):
    fields = presigned(s3, bucket, "bad")
    file = ("f", "text/plain", b"data")
    content_type = None
    signed = lambda extra: presigned(s3, bucket, "bad", extra, [{k: v} for k, v in extra.items()])
    if case == "not_a_form":
        content_type = "application/x-www-form-urlencoded"
    elif case == "no_key":
        fields = [(n, v) for n, v in fields if n != "key"]
    elif case == "no_file":
        file = None
    elif case == "fields_too_large":
        fields = fields + [("x-ignore-pad", "p" * (21 << 10))]
    elif case == "bad_policy":
        fields = resigned(server, replaced(fields, "policy", "bm90IGpzb24="))  # "not json"
    elif case == "policy_unsigned":
        fields = [(n, v) for n, v in fields if n in ("key", "policy")]
    elif case == "acl_unknown":
        fields = signed({"acl": "everyone-please"})
    elif case == "field_twice":
        fields = fields + [("KEY", "bad")]
    elif case == "bad_tagging":
        fields = signed({"tagging": "<Tagging><TagSet>"})
    elif case == "too_many_tags":
        tags = "".join(f"<Tag><Key>k{i}</Key><Value>v</Value></Tag>" for i in range(11))
        fields = signed({"tagging": f"<Tagging><TagSet>{tags}</TagSet></Tagging>"})
    elif case == "header_in_metadata":
        fields = signed({"x-amz-meta-a": "b\r\nx-injected: 1"})
    elif case == "bad_md5":
        fields = signed({"Content-MD5": base64.b64encode(hashlib.md5(b"other").digest())
                         .decode()})
    got = post(server, bucket, fields, file, content_type=content_type)
    assert (got.status, got.code) == (status, code), got
    assert object_missing(s3, bucket, "bad")


def test_private_acl_and_fields_after_the_file(server, s3, bucket):
    fields = presigned(s3, bucket, "acl", {"acl": "private"}, [{"acl": "private"}])
    # What follows the file is not read (S3 ignores it): not even a conflicting key.
    got = post(server, bucket, fields, ("f", "text/plain", b"kept"), after=[("key", "other")])
    assert got.status == 204, got
    assert s3.get_object(Bucket=bucket, Key="acl")["Body"].read() == b"kept"
    assert object_missing(s3, bucket, "other")


def test_the_acl_field_sets_the_objects_acl(server, s3, s3_other, bucket):
    anonymous = make_client(server, signature_version=botocore.UNSIGNED)
    fields = presigned(s3, bucket, "public", {"acl": "public-read"}, [{"acl": "public-read"}])
    got = post(server, bucket, fields, ("f", "text/plain", b"for everyone"))
    assert got.status == 204, got
    assert anonymous.get_object(Bucket=bucket, Key="public")["Body"].read() == b"for everyone"
    grants = s3.get_object_acl(Bucket=bucket, Key="public")["Grants"]
    assert {(g["Grantee"].get("URI", "").rsplit("/", 1)[-1], g["Permission"])
            for g in grants} >= {("AllUsers", "READ")}
    # The same form's policy without the acl condition: an extra field, refused.
    bare = presigned(s3, bucket, "public2")
    got = post(server, bucket, bare + [("acl", "public-read")], ("f", "text/plain", b"x"))
    assert (got.status, got.code) == (403, "AccessDenied"), got
    assert object_missing(s3, bucket, "public2")
    # A block on public ACLs refuses the form, with nothing stored.
    s3.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration={
        "BlockPublicAcls": True, "IgnorePublicAcls": False, "BlockPublicPolicy": False,
        "RestrictPublicBuckets": False})
    fields = presigned(s3, bucket, "blocked", {"acl": "public-read"}, [{"acl": "public-read"}])
    got = post(server, bucket, fields, ("f", "text/plain", b"x"))
    assert (got.status, got.code) == (403, "AccessDenied"), got
    assert object_missing(s3, bucket, "blocked")
    # With ACLs off (BucketOwnerEnforced) a granting ACL is AccessControlListNotSupported.
    s3.delete_public_access_block(Bucket=bucket)
    s3.put_bucket_ownership_controls(Bucket=bucket, OwnershipControls={
        "Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]})
    got = post(server, bucket, fields, ("f", "text/plain", b"x"))
    assert (got.status, got.code) == (400, "AccessControlListNotSupported"), got
    assert object_missing(s3, bucket, "blocked")


def test_lock_fields_in_a_locked_bucket(server, s3):
    name = unique_bucket()
    s3.create_bucket(Bucket=name, ObjectLockEnabledForBucket=True)
    until = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)) \
        .strftime("%Y-%m-%dT%H:%M:%S.000Z")
    extra = {"x-amz-object-lock-mode": "GOVERNANCE",
             "x-amz-object-lock-retain-until-date": until,
             "x-amz-object-lock-legal-hold": "ON"}
    fields = presigned(s3, name, "held", extra, [{k: v} for k, v in extra.items()])
    got = post(server, name, fields, ("f", "text/plain", b"worm"))
    assert got.status == 204, got
    head = s3.head_object(Bucket=name, Key="held")
    assert head["ObjectLockMode"] == "GOVERNANCE"
    assert head["ObjectLockLegalHoldStatus"] == "ON"
    version = got.headers["x-amz-version-id"]
    with raises_s3("AccessDenied", 403):
        s3.delete_object(Bucket=name, Key="held", VersionId=version)
    s3.put_object_legal_hold(Bucket=name, Key="held", VersionId=version,
                             LegalHold={"Status": "OFF"})
    s3.delete_object(Bucket=name, Key="held", VersionId=version,
                     BypassGovernanceRetention=True)
    # Lock fields in a bucket without object lock: InvalidRequest, nothing stored.
    plain = unique_bucket()
    s3.create_bucket(Bucket=plain)
    fields = presigned(s3, plain, "held", extra, [{k: v} for k, v in extra.items()])
    got = post(server, plain, fields, ("f", "text/plain", b"worm"))
    assert (got.status, got.code) == (400, "InvalidRequest"), got
    assert object_missing(s3, plain, "held")
    s3.delete_bucket(Bucket=plain)
    s3.delete_bucket(Bucket=name)


def test_curl_form_upload(server, s3, bucket, tmp_path):
    curl = require_tool("curl", package="curl")
    path = tmp_path / "curl upload.txt"
    path.write_bytes(b"uploaded by curl -F\n" * 1000)
    fields = presigned(s3, bucket, "curl/${filename}", {"success_action_status": "201"},
                       [{"success_action_status": "201"}])
    args = [curl, "-sS", "-o", str(tmp_path / "out"), "-w", "%{http_code}"]
    for name, value in fields:
        args += ["--form-string", f"{name}={value}"]
    args += ["-F", f"file=@{path}", f"{server.endpoint}/{bucket}"]
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == "201", (r.stdout, r.stderr,
                                                    (tmp_path / "out").read_bytes())
    assert b"<Key>curl/curl upload.txt</Key>" in (tmp_path / "out").read_bytes()
    body = s3.get_object(Bucket=bucket, Key="curl/curl upload.txt")["Body"].read()
    assert body == path.read_bytes()


def test_a_browser_posts_a_form_from_another_origin(server, s3, bucket):
    s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=test_cors.rules(
        {"AllowedOrigins": [f"http://{test_cors.PAGE_ORIGIN_HOST}:*"], "AllowedMethods": ["POST"],
         "ExposeHeaders": ["ETag"]}))
    fields = presigned(s3, bucket, "browser/${filename}", {"success_action_status": "201"},
                       [{"success_action_status": "201"}])
    appends = "\n".join(f"form.append({json.dumps(n)}, {json.dumps(v)});" for n, v in fields)
    script = f"""
      async function run() {{
        const out = [];
        try {{
          const form = new FormData();
          {appends}
          form.append("file", new Blob(["posted by chromium"], {{type: "text/plain"}}),
                      "page.txt");
          const r = await fetch("{server.endpoint}/{bucket}", {{method: "POST", body: form}});
          const text = await r.text();
          out.push("POST " + r.status + " " + (r.headers.get("ETag") || "no-etag") + " " +
                   (text.includes("<Key>browser/page.txt</Key>") ? "key" : text));
        }} catch (e) {{ out.push("POST failed " + e); }}
        document.getElementById("out").textContent = out.join(" | ");
      }}
      run();"""
    page = f"<html><body><pre id=out>pending</pre><script>{script}</script></body></html>"
    out = test_cors.run_browser(page.encode())
    etag = hashlib.md5(b"posted by chromium").hexdigest()
    assert out == f'POST 201 "{etag}" key', out
    obj = s3.get_object(Bucket=bucket, Key="browser/page.txt")
    assert obj["Body"].read() == b"posted by chromium"


def test_boto3_signature_matches_an_independent_hmac(server, s3, bucket):
    """boto3's SigV4 form verified against an independent computation of its signature
    (Python's hmac over the base64 policy), so the two sides cannot share a mistake."""
    fields = dict(presigned(s3, bucket, "vector"))
    date = fields["x-amz-date"][:8]
    key = s3sign.signing_key(server.secret_key, date, server.region)
    assert hmac.new(key, fields["policy"].encode(), hashlib.sha256).hexdigest() == \
        fields["x-amz-signature"]
    assert post(server, bucket, list(fields.items()), ("f", "text/plain", b"v")).status == 204


def test_virtual_hosted_post(strata_factory, loopback_domain):
    srv = strata_factory({"server": {"domain": DOMAIN}})
    s3 = virtual_client(srv)
    name = unique_bucket("vpost")
    s3.create_bucket(Bucket=name)
    form = s3.generate_presigned_post(Bucket=name, Key="v/${filename}")
    host = f"{name}.{DOMAIN}:{srv.port}"
    assert form["url"].startswith(f"http://{host}"), form["url"]
    body, ctype = form_body(list(form["fields"].items()), ("x.txt", "text/plain", b"vhost"))
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    try:
        conn.request("POST", "/", body=body, headers={"Host": host, "Content-Type": ctype})
        got = Answer(conn.getresponse())
    finally:
        conn.close()
    assert got.status == 204, got
    assert got.headers["location"] == f"http://{host}/v/x.txt"
    assert s3.get_object(Bucket=name, Key="v/x.txt")["Body"].read() == b"vhost"


def test_checksum_fields(server, s3, bucket):
    data = b"checksummed by the form"
    crc32 = base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()
    fields = presigned(s3, bucket, "sum", {"x-amz-checksum-crc32": crc32},
                       [{"x-amz-checksum-crc32": crc32}])
    got = post(server, bucket, fields, ("f", "text/plain", data))
    assert got.status == 204, got
    assert got.headers["x-amz-checksum-crc32"] == crc32
    head = s3.head_object(Bucket=bucket, Key="sum", ChecksumMode="ENABLED")
    assert head["ChecksumCRC32"] == crc32
    got = post(server, bucket, fields, ("f", "text/plain", data + b"!"))
    assert (got.status, got.code) == (400, "BadDigest"), got
    assert s3.get_object(Bucket=bucket, Key="sum")["Body"].read() == data


def test_a_client_gone_midway_leaves_nothing(server, s3, bucket):
    before = data_files(server)
    body, ctype = form_body(presigned(s3, bucket, "gone"), ("f", "text/plain", b"z" * (4 << 20)))
    conn = RawConn(server)
    conn.send(f"POST /{bucket} HTTP/1.1\r\nHost: {server.netloc}\r\nContent-Type: {ctype}\r\n"
              f"Content-Length: {len(body)}\r\n\r\n".encode() + body[:len(body) // 2])
    conn.close()
    deadline = time.monotonic() + 10
    while data_files(server) != before and time.monotonic() < deadline:
        time.sleep(0.05)  # the server notices the closed connection on its next read
    assert data_files(server) == before
    assert object_missing(s3, bucket, "gone")
