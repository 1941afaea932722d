"""Every x-amz-* header of a SigV4 request must be signed (issue 17, item 1).

S3 acts on x-amz-* headers, so one its signature leaves out changes what a signed request
does: a presigned PUT URL plus an unsigned x-amz-copy-source copied any object the
URL's signer could read into the URL's key. S3 (and now strata) answers 403 AccessDenied,
"There were headers present in the request which were not signed", naming them in
<HeadersNotSigned>. x-amz-content-sha256 is exempt: it is the payload hash the signature
ends with. SigV2 signs every x-amz-* header anyway: one added breaks the signature.
"""
import base64
import email.utils
import hashlib
import hmac
import re

import pytest
import requests

import s3sign
from conftest import aws_clis, make_client, presign_url, run_aws, unique_bucket, xml_code

NOT_SIGNED = "There were headers present in the request which were not signed"


def headers_not_signed(body: bytes) -> str:
    m = re.search(rb"<HeadersNotSigned>([^<]*)</HeadersNotSigned>", body)
    return m.group(1).decode() if m else None


def assert_not_signed(resp, names):
    assert resp.status_code == 403, (resp.status_code, resp.text)
    assert xml_code(resp.content) == "AccessDenied", resp.text
    assert f"<Message>{NOT_SIGNED}</Message>" in resp.text, resp.text
    assert headers_not_signed(resp.content) == names, resp.text


def signed_headers(srv, method, path, signed, payload_hash=s3sign.UNSIGNED_PAYLOAD, query=()):
    """Headers for a header-signed SigV4 request whose signature covers exactly `signed`
    (plus host, x-amz-date and x-amz-content-sha256)."""
    signer = s3sign.SigV4(srv.access_key, srv.secret_key, srv.region)
    headers = {"host": srv.netloc, "x-amz-date": s3sign.amz_now(),
               "x-amz-content-sha256": payload_hash}
    headers.update({k.lower(): v for k, v in signed.items()})
    headers["authorization"] = signer.authorization(method, path, list(query), headers,
                                                    payload_hash)
    return headers


def object_exists(s3, bucket, key) -> bool:
    try:
        s3.head_object(Bucket=bucket, Key=key)
        return True
    except s3.exceptions.ClientError as e:
        assert e.response["ResponseMetadata"]["HTTPStatusCode"] == 404, e.response
        return False


# --- presigned (query) SigV4 ------------------------------------------------------------

def test_presigned_put_with_unsigned_copy_source_copies_nothing(server, s3, bucket):
    """The attack: a URL to upload one key, used to copy a private object into it."""
    private = unique_bucket("private")
    s3.create_bucket(Bucket=private)
    try:
        s3.put_object(Bucket=private, Key="secret", Body=b"the signer's private data")
        url = presign_url(server, "PUT", bucket, "upload-here")
        r = requests.put(url, data=b"", headers={"x-amz-copy-source": f"/{private}/secret"},
                         timeout=30)
        assert_not_signed(r, "x-amz-copy-source")
        assert b"private data" not in r.content
        assert not object_exists(s3, bucket, "upload-here")
        # The URL still does what it was made for.
        r = requests.put(url, data=b"my upload", timeout=30)
        assert r.status_code == 200, r.text
        assert s3.get_object(Bucket=bucket, Key="upload-here")["Body"].read() == b"my upload"
    finally:
        s3.delete_object(Bucket=private, Key="secret")
        s3.delete_bucket(Bucket=private)


def test_presigned_put_with_unsigned_metadata_or_tags_is_refused(server, s3, bucket):
    url = presign_url(server, "PUT", bucket, "k")
    r = requests.put(url, data=b"x", headers={"x-amz-meta-owner": "mallory"}, timeout=30)
    assert_not_signed(r, "x-amz-meta-owner")
    r = requests.put(url, data=b"x", headers={"x-amz-tagging": "public=yes"}, timeout=30)
    assert_not_signed(r, "x-amz-tagging")
    r = requests.put(url, data=b"x", headers={"x-amz-storage-class": "STANDARD_IA",
                                              "X-Amz-Meta-A": "1", "x-amz-meta-b": "2"},
                     timeout=30)
    assert_not_signed(r, "x-amz-storage-class, x-amz-meta-a, x-amz-meta-b")
    assert not object_exists(s3, bucket, "k")


def test_presigned_url_that_signs_its_headers_works(server, s3, bucket):
    client = make_client(server)
    url = client.generate_presigned_url(
        "put_object", Params={"Bucket": bucket, "Key": "k", "Metadata": {"owner": "alice"},
                              "Tagging": "team=ml"},
        ExpiresIn=300, HttpMethod="PUT")
    signed = re.search(r"X-Amz-SignedHeaders=([^&]*)", url).group(1)
    assert "x-amz-meta-owner" in signed and "x-amz-tagging" in signed, url
    r = requests.put(url, data=b"hello",
                     headers={"x-amz-meta-owner": "alice", "x-amz-tagging": "team=ml"},
                     timeout=30)
    assert r.status_code == 200, r.text
    head = s3.head_object(Bucket=bucket, Key="k")
    assert head["Metadata"] == {"owner": "alice"}
    tags = s3.get_object_tagging(Bucket=bucket, Key="k")["TagSet"]
    assert tags == [{"Key": "team", "Value": "ml"}]
    # An unsigned x-amz-content-sha256 of UNSIGNED-PAYLOAD is what the URL signed anyway.
    plain = presign_url(server, "GET", bucket, "k")
    r = requests.get(plain, headers={"x-amz-content-sha256": "UNSIGNED-PAYLOAD"}, timeout=30)
    assert r.status_code == 200 and r.content == b"hello", r.text


def test_presigned_get_with_unsigned_header_is_refused(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"data")
    url = presign_url(server, "GET", bucket, "k")
    assert requests.get(url, timeout=30).content == b"data"
    # x-amz-date as a header is not the signed X-Amz-Date parameter.
    r = requests.get(url, headers={"x-amz-date": s3sign.amz_now()}, timeout=30)
    assert_not_signed(r, "x-amz-date")
    assert b"data" not in r.content


# --- header-signed SigV4 ----------------------------------------------------------------

def test_header_signed_put_with_unsigned_amz_headers_is_refused(server, s3, bucket):
    path = f"/{bucket}/k"
    for extra, names in [({"x-amz-meta-owner": "mallory"}, "x-amz-meta-owner"),
                         ({"x-amz-tagging": "a=b"}, "x-amz-tagging"),
                         ({"x-amz-copy-source": f"/{bucket}/src"}, "x-amz-copy-source"),
                         ({"x-amz-meta-a": "1", "x-amz-storage-class": "STANDARD_IA"},
                          "x-amz-meta-a, x-amz-storage-class")]:
        headers = signed_headers(server, "PUT", path, {})
        headers.update(extra)
        r = requests.put(server.endpoint + path, data=b"body", headers=headers, timeout=30)
        assert_not_signed(r, names)
    assert not object_exists(s3, bucket, "k")


def test_header_signed_copy_with_unsigned_copy_source_copies_nothing(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"source bytes")
    path = f"/{bucket}/dst"
    headers = signed_headers(server, "PUT", path, {}, payload_hash=s3sign.EMPTY_SHA256)
    headers["x-amz-copy-source"] = f"/{bucket}/src"
    r = requests.put(server.endpoint + path, data=b"", headers=headers, timeout=30)
    assert_not_signed(r, "x-amz-copy-source")
    assert not object_exists(s3, bucket, "dst")
    # Signed, the same copy works.
    headers = signed_headers(server, "PUT", path, {"x-amz-copy-source": f"/{bucket}/src"},
                             payload_hash=s3sign.EMPTY_SHA256)
    r = requests.put(server.endpoint + path, data=b"", headers=headers, timeout=30)
    assert r.status_code == 200, r.text
    assert s3.get_object(Bucket=bucket, Key="dst")["Body"].read() == b"source bytes"


def test_header_signed_amz_headers_when_signed_work(server, s3, bucket):
    path = f"/{bucket}/k"
    headers = signed_headers(server, "PUT", path,
                             {"x-amz-meta-owner": "alice", "x-amz-tagging": "team=ml"},
                             payload_hash=hashlib.sha256(b"body").hexdigest())
    # Headers other than x-amz-* may go unsigned, as on S3 (user-agent, content-type).
    headers["content-type"] = "text/plain"
    r = requests.put(server.endpoint + path, data=b"body", headers=headers, timeout=30)
    assert r.status_code == 200, r.text
    head = s3.head_object(Bucket=bucket, Key="k")
    assert head["Metadata"] == {"owner": "alice"}
    assert head["ContentType"] == "text/plain"
    assert s3.get_object_tagging(Bucket=bucket, Key="k")["TagSet"] == [
        {"Key": "team", "Value": "ml"}]


def test_content_sha256_need_not_be_named(server, s3, bucket):
    """x-amz-content-sha256 outside SignedHeaders: accepted (AWS exempts it), because its
    value is the payload hash the signature covers; a changed one does not verify."""
    s3.put_object(Bucket=bucket, Key="k", Body=b"data")
    path = f"/{bucket}/k"
    signer = s3sign.SigV4(server.access_key, server.secret_key, server.region)
    amz = s3sign.amz_now()
    named = {"host": server.netloc, "x-amz-date": amz}
    auth = signer.authorization("GET", path, [], named, s3sign.EMPTY_SHA256)
    headers = dict(named, authorization=auth)
    headers["x-amz-content-sha256"] = s3sign.EMPTY_SHA256
    r = requests.get(server.endpoint + path, headers=headers, timeout=30)
    assert r.status_code == 200 and r.content == b"data", r.text
    headers["x-amz-content-sha256"] = s3sign.UNSIGNED_PAYLOAD
    r = requests.get(server.endpoint + path, headers=headers, timeout=30)
    assert (r.status_code, xml_code(r.content)) == (403, "SignatureDoesNotMatch"), r.text


# --- SigV2 signs every x-amz-* header ---------------------------------------------------

def sigv2_headers(srv, method, bucket, key, amz=None):
    amz = amz or {}
    date = email.utils.formatdate(usegmt=True)
    canon_amz = "".join(f"{k.lower()}:{v}\n" for k, v in sorted(amz.items()))
    sts = f"{method}\n\n\n{date}\n{canon_amz}/{bucket}/{key}"
    sig = base64.b64encode(hmac.new(srv.secret_key.encode(), sts.encode(),
                                    hashlib.sha1).digest()).decode()
    return dict(amz, Date=date, Authorization=f"AWS {srv.access_key}:{sig}")


def test_sigv2_added_amz_header_breaks_the_signature(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"source bytes")
    url = f"{server.endpoint}/{bucket}/k"
    ok = sigv2_headers(server, "PUT", bucket, "k", {"x-amz-meta-owner": "alice"})
    r = requests.put(url, data=b"v2", headers=ok, timeout=30)
    assert r.status_code == 200, r.text
    assert s3.head_object(Bucket=bucket, Key="k")["Metadata"] == {"owner": "alice"}
    for extra in ({"x-amz-meta-owner2": "mallory"}, {"x-amz-copy-source": f"/{bucket}/src"},
                  {"x-amz-tagging": "a=b"}):
        headers = sigv2_headers(server, "PUT", bucket, "k2")
        headers.update(extra)
        r = requests.put(f"{server.endpoint}/{bucket}/k2", data=b"", headers=headers, timeout=30)
        assert (r.status_code, xml_code(r.content)) == (403, "SignatureDoesNotMatch"), r.text
    assert not object_exists(s3, bucket, "k2")


def test_sigv2_presigned_put_with_unsigned_copy_source_copies_nothing(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"source bytes")
    url = presign_url(server, "PUT", bucket, "dst", signature_version="s3")
    r = requests.put(url, data=b"", headers={"x-amz-copy-source": f"/{bucket}/src"}, timeout=30)
    assert (r.status_code, xml_code(r.content)) == (403, "SignatureDoesNotMatch"), r.text
    assert not object_exists(s3, bucket, "dst")


# --- real clients sign what they send -----------------------------------------------------

def test_boto3_sends_signed_amz_headers(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="a", Body=b"abc", Metadata={"m": "1"}, Tagging="t=1",
                  StorageClass="STANDARD_IA", ContentType="text/plain")
    s3.copy_object(Bucket=bucket, Key="b", CopySource={"Bucket": bucket, "Key": "a"},
                   MetadataDirective="REPLACE", Metadata={"m": "2"}, TaggingDirective="REPLACE",
                   Tagging="t=2")
    assert s3.head_object(Bucket=bucket, Key="b")["Metadata"] == {"m": "2"}
    up = s3.create_multipart_upload(Bucket=bucket, Key="mp", Metadata={"m": "3"}, Tagging="t=3")
    part = s3.upload_part_copy(Bucket=bucket, Key="mp", UploadId=up["UploadId"], PartNumber=1,
                               CopySource={"Bucket": bucket, "Key": "a"},
                               CopySourceRange="bytes=0-1")
    s3.complete_multipart_upload(
        Bucket=bucket, Key="mp", UploadId=up["UploadId"],
        MultipartUpload={"Parts": [{"PartNumber": 1,
                                    "ETag": part["CopyPartResult"]["ETag"]}]})
    assert s3.get_object(Bucket=bucket, Key="mp")["Body"].read() == b"ab"
    s3.put_object_tagging(Bucket=bucket, Key="mp", Tagging={"TagSet": [{"Key": "x", "Value": "y"}]})
    s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "a"}, {"Key": "b"}]})


@pytest.mark.parametrize("cli", aws_clis())
def test_aws_cli_sends_signed_amz_headers(server, s3, bucket, tmp_path, cli):
    src = tmp_path / "f"
    src.write_bytes(b"cli body")
    run_aws(cli, server, ["s3api", "put-object", "--bucket", bucket, "--key", "k", "--body",
                          str(src), "--metadata", "owner=cli", "--tagging", "t=1",
                          "--storage-class", "STANDARD_IA"], tmp_path)
    run_aws(cli, server, ["s3", "cp", f"s3://{bucket}/k", f"s3://{bucket}/k2",
                          "--metadata-directive", "REPLACE", "--metadata", "owner=copy"],
            tmp_path)
    assert s3.head_object(Bucket=bucket, Key="k")["Metadata"] == {"owner": "cli"}
    assert s3.head_object(Bucket=bucket, Key="k2")["Metadata"] == {"owner": "copy"}
