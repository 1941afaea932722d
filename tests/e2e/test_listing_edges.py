"""Bucket and listing edge cases real clients hit: CreateBucket of a bucket one owns,
ListBuckets paging, max-keys=0, a delimiter run that starts inside the prefix, and keys
with control characters."""
import re
import urllib.parse
import xml.etree.ElementTree as ET

import pytest

import s3sign
from conftest import ADMIN_AK, ADMIN_SK, OTHER_AK, OTHER_SK, make_client, raises_s3, \
    raw_exchange, unique_bucket

NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"


def signed_get(server, path, query=(), access_key=ADMIN_AK, secret_key=ADMIN_SK):
    signer = s3sign.SigV4(access_key, secret_key, server.region)
    return raw_exchange(server, s3sign.signed_request_bytes(signer, "GET", server.netloc, path,
                                                            query=list(query)))


def parse(resp):
    assert resp.status == 200, resp
    return ET.fromstring(resp.body)


def text(node, name):
    found = node.find(NS + name)
    return None if found is None else (found.text or "")


# --- CreateBucket ------------------------------------------------------------------------

@pytest.mark.boto3
def test_create_bucket_you_own_in_us_east_1_is_ok(s3, bucket):
    # S3's legacy behaviour in us-east-1: the repeated create succeeds and changes nothing.
    s3.put_object(Bucket=bucket, Key="kept", Body=b"x")
    resp = s3.create_bucket(Bucket=bucket)
    assert resp["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["kept"]


@pytest.mark.boto3
def test_create_bucket_you_own_elsewhere_is_already_owned(strata_factory):
    srv = strata_factory(overrides={"server": {"region": "eu-west-1"}})
    s3 = make_client(srv)
    conf = {"LocationConstraint": "eu-west-1"}
    s3.create_bucket(Bucket="mine", CreateBucketConfiguration=conf)
    with raises_s3("BucketAlreadyOwnedByYou", 409):
        s3.create_bucket(Bucket="mine", CreateBucketConfiguration=conf)
    with raises_s3("BucketAlreadyExists", 409):
        make_client(srv, OTHER_AK, OTHER_SK).create_bucket(Bucket="mine",
                                                           CreateBucketConfiguration=conf)


# --- ListBuckets paging ------------------------------------------------------------------

def list_buckets(server, **params):
    query = [(k.replace("_", "-"), str(v)) for k, v in params.items()]
    root = parse(signed_get(server, "/", query))
    names = [text(b, "Name") for b in root.iter(NS + "Bucket")]
    regions = [text(b, "BucketRegion") for b in root.iter(NS + "Bucket")]
    return root, names, regions


def test_list_buckets_paging(server, s3):
    stem = unique_bucket("lbp")
    names = sorted(f"{stem}-{i:02d}" for i in range(7))
    for name in names:
        s3.create_bucket(Bucket=name)
    try:
        # Unpaged: every bucket, with its region, and no token.
        root, listed, regions = list_buckets(server)
        assert set(names) <= set(listed)
        assert text(root, "ContinuationToken") is None
        # prefix + max-buckets: pages of 3, 3, 1; the token carries on where the page ended.
        got, token, pages = [], None, 0
        while True:
            params = {"prefix": stem, "max_buckets": 3}
            if token is not None:
                params["continuation_token"] = token
            root, page, regions = list_buckets(server, **params)
            assert text(root, "Prefix") == stem
            assert regions == ["us-east-1"] * len(page)
            got += page
            pages += 1
            token = text(root, "ContinuationToken")
            if token is None:
                break
            assert len(page) == 3
        assert got == names and pages == 3
        # bucket-region filters: this server's region has them all, another none.
        _, page, _ = list_buckets(server, prefix=stem, bucket_region="us-east-1")
        assert page == names
        _, page, _ = list_buckets(server, prefix=stem, bucket_region="eu-west-1")
        assert page == []
        # A prefix that matches nothing.
        root, page, _ = list_buckets(server, prefix=stem + "-zz")
        assert page == [] and text(root, "ContinuationToken") is None
        # max-buckets outside 1..10000 is InvalidArgument.
        for bad in ("0", "10001", "-1", "x"):
            resp = signed_get(server, "/", [("max-buckets", bad)])
            assert (resp.status, resp.code) == (400, "InvalidArgument"), (bad, resp)
    finally:
        for name in names:
            s3.delete_bucket(Bucket=name)


@pytest.mark.needs_new_boto3
def test_list_buckets_paging_boto3(server, s3):
    stem = unique_bucket("lbb")
    names = sorted(f"{stem}-{i}" for i in range(5))
    for name in names:
        s3.create_bucket(Bucket=name)
    try:
        paginator = s3.get_paginator("list_buckets")
        got = [b["Name"] for page in paginator.paginate(Prefix=stem, PaginationConfig={
            "PageSize": 2}) for b in page["Buckets"]]
        assert got == names
        first = s3.list_buckets(Prefix=stem, MaxBuckets=2)
        assert first["Prefix"] == stem and first["ContinuationToken"]
        assert [b["BucketRegion"] for b in first["Buckets"]] == ["us-east-1"] * 2
    finally:
        for name in names:
            s3.delete_bucket(Bucket=name)


# --- max-keys=0 --------------------------------------------------------------------------

def test_max_keys_zero(server, s3, bucket):
    for key in ("a", "b/c", "d"):
        s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    upload = s3.create_multipart_upload(Bucket=bucket, Key="u")["UploadId"]
    cases = [
        ([("max-keys", "0")], "MaxKeys"),
        ([("list-type", "2"), ("max-keys", "0")], "MaxKeys"),
        ([("versions", ""), ("max-keys", "0")], "MaxKeys"),
        ([("max-keys", "0"), ("delimiter", "/")], "MaxKeys"),
        ([("uploads", ""), ("max-uploads", "0")], "MaxUploads"),
    ]
    for query, max_name in cases:
        root = parse(signed_get(server, f"/{bucket}", query))
        assert text(root, "IsTruncated") == "false", (query, ET.tostring(root))
        assert text(root, max_name) == "0", query
        for name in ("Contents", "Version", "DeleteMarker", "CommonPrefixes", "Upload"):
            assert root.find(NS + name) is None, (query, name)
        for name in ("NextMarker", "NextContinuationToken", "NextKeyMarker"):
            assert root.find(NS + name) is None, (query, name)
        if ("list-type", "2") in query:
            assert text(root, "KeyCount") == "0"
    s3.abort_multipart_upload(Bucket=bucket, Key="u", UploadId=upload)


# --- delimiter runs ----------------------------------------------------------------------

KEYS = ["a//b", "a///c", "a/x//y", "a/d", "a////e", "b//f"]


def listing(server, bucket, query):
    root = parse(signed_get(server, f"/{bucket}", query))
    if ("versions", "") in query:
        keys = [text(v, "Key") for v in root.iter(NS + "Version")]
    else:
        keys = [text(c, "Key") for c in root.iter(NS + "Contents")]
    prefixes = [text(p, "Prefix") for p in root.iter(NS + "CommonPrefixes")]
    return keys, prefixes


@pytest.mark.parametrize("extra", [[], [("list-type", "2")], [("versions", "")]])
def test_delimiter_run_starting_inside_the_prefix(server, s3, bucket, extra):
    # The delimiter is looked for after the prefix only: with prefix "a/" and delimiter
    # "//", "a//b" leaves "/b", which holds no "//" (S3 lists it as a key), "a///c"
    # leaves "//c" and rolls up to "a///".
    for key in KEYS:
        s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    keys, prefixes = listing(server, bucket, extra + [("prefix", "a/"), ("delimiter", "//")])
    assert keys == ["a//b", "a/d"]
    assert prefixes == ["a///", "a/x//"]
    # Paging one entry at a time gives the same entries in the same order.
    seen = []
    marker_query = []
    for _ in range(10):
        q = extra + [("prefix", "a/"), ("delimiter", "//")] + marker_query
        q += [("max-keys", "1")]
        root = parse(signed_get(server, f"/{bucket}", q))
        for node in root:
            tag = node.tag.replace(NS, "")
            if tag in ("Contents", "Version"):
                seen.append(text(node, "Key"))
            elif tag == "CommonPrefixes":
                seen.append(text(node, "Prefix"))
        if text(root, "IsTruncated") != "true":
            break
        if ("list-type", "2") in extra:
            marker_query = [("continuation-token", text(root, "NextContinuationToken"))]
        elif ("versions", "") in extra:
            marker_query = [("key-marker", text(root, "NextKeyMarker"))]
            if text(root, "NextVersionIdMarker"):
                marker_query.append(("version-id-marker", text(root, "NextVersionIdMarker")))
        else:
            marker_query = [("marker", text(root, "NextMarker"))]
    assert seen == ["a///", "a//b", "a/d", "a/x//"]  # "/" sorts before "b"
    # Without the prefix, "a//" swallows every a-key that has "//".
    keys, prefixes = listing(server, bucket, extra + [("delimiter", "//")])
    assert keys == ["a/d"] and prefixes == ["a//", "a/x//", "b//"]


def test_delimiter_run_in_multipart_uploads(server, s3, bucket):
    ids = {k: s3.create_multipart_upload(Bucket=bucket, Key=k)["UploadId"] for k in KEYS}
    root = parse(signed_get(server, f"/{bucket}", [("uploads", ""), ("prefix", "a/"),
                                                   ("delimiter", "//")]))
    assert [text(u, "Key") for u in root.iter(NS + "Upload")] == ["a//b", "a/d"]
    assert [text(p, "Prefix") for p in root.iter(NS + "CommonPrefixes")] == ["a///", "a/x//"]
    # One at a time: NextKeyMarker "a///" resumes past "a///c", which rolls up there too.
    seen, marker = [], []
    for _ in range(10):
        root = parse(signed_get(server, f"/{bucket}", [
            ("uploads", ""), ("prefix", "a/"), ("delimiter", "//"), ("max-uploads", "1")] +
            marker))
        seen += [text(u, "Key") for u in root.iter(NS + "Upload")]
        seen += [text(p, "Prefix") for p in root.iter(NS + "CommonPrefixes")]
        if text(root, "IsTruncated") != "true":
            break
        marker = [("key-marker", text(root, "NextKeyMarker"))]
        if text(root, "NextUploadIdMarker"):
            marker.append(("upload-id-marker", text(root, "NextUploadIdMarker")))
    assert seen == ["a///", "a//b", "a/d", "a/x//"]  # "/" sorts before "b"
    for k, upload_id in ids.items():
        s3.abort_multipart_upload(Bucket=bucket, Key=k, UploadId=upload_id)


# --- control characters ------------------------------------------------------------------

CONTROL_KEYS = ["c\x01d", "lf\nkey", "tab\tkey", "x\x1fy"]


def test_control_character_keys_list(server, s3, bucket):
    for key in CONTROL_KEYS:
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    # With encoding-type=url every key comes back exactly, in order.
    for extra in ([], [("list-type", "2")], [("versions", "")]):
        root = parse(signed_get(server, f"/{bucket}", extra + [("encoding-type", "url")]))
        node = "Version" if extra == [("versions", "")] else "Contents"
        keys = [urllib.parse.unquote(text(c, "Key")) for c in root.iter(NS + node)]
        assert keys == sorted(CONTROL_KEYS), extra
    # Without it: the listing still answers 200 with every key counted (how the XML writer
    # spells characters XML 1.0 cannot carry is the XML writer's business), and a GET of
    # each key works.
    resp = signed_get(server, f"/{bucket}", [("list-type", "2")])
    assert resp.status == 200, resp
    assert re.search(rb"<KeyCount>4</KeyCount>", resp.body), resp
    for key in CONTROL_KEYS:
        assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == key.encode()
