"""XML hardening (issue 17, items 4 and 5), on raw sockets with exact bytes:

- Keys, listing parameters and copy sources that are not UTF-8 are refused as S3 does
  (400 InvalidArgument "Couldn't parse the specified URI." for the request target,
  "Invalid copy source encoding" for x-amz-copy-source), and XML
  bodies that are not UTF-8 or carry characters XML 1.0 excludes are MalformedXML: none is
  stored, so none is echoed into a listing later.
- Every XML document strata writes parses with a strict XML 1.0 parser (expat, through
  xml.etree), also for keys with NUL and other control characters: error bodies replace
  what XML cannot carry with U+FFFD, and listings the client did not ask to url-encode are
  url-encoded whole (saying <EncodingType>url</EncodingType>) when a key needs it.
- Concurrent large XML bodies share one memory budget (server.xml_memory): past it the
  requests get 503 SlowDown, and the server's peak RSS (VmHWM) stays bounded.
"""
import base64
import hashlib
import threading
import urllib.parse
import xml.etree.ElementTree as ET

import pytest

import s3sign
from conftest import ADMIN_AK, ADMIN_SK, RawConn, raw_exchange, xml_code

NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"


def request_bytes(srv, method, path, query=(), body=b"", headers=None, md5=False):
    """A signed request; `path` and query values may be bytes (sent percent-encoded)."""
    extra = dict(headers or {})
    if md5:
        extra["content-md5"] = base64.b64encode(hashlib.md5(body).digest()).decode()
    signer = s3sign.SigV4(ADMIN_AK, ADMIN_SK, srv.region)
    return s3sign.signed_request_bytes(signer, method, srv.netloc, path, query, body, extra)


def call(srv, method, path, query=(), body=b"", headers=None, md5=False):
    resp = raw_exchange(srv, request_bytes(srv, method, path, query, body, headers, md5))
    assert resp is not None, "the server closed the connection without answering"
    return resp


def strict(body: bytes) -> ET.Element:
    """Parses with expat, which refuses what XML 1.0 does (bad UTF-8, "&#x0;", ...)."""
    try:
        return ET.fromstring(body)
    except ET.ParseError as e:
        pytest.fail(f"not well-formed XML ({e}): {body[:600]!r}")


def assert_error(resp, status, code):
    assert resp.status == status, resp
    root = strict(resp.body)
    assert root.tag == "Error" and code in (None, root.findtext("Code")), resp


# ---------------------------------------------------------------------------------------
# Input that is not UTF-8

NOT_UTF8 = [
    b"\xff",                # never valid
    b"\xc0\xaf",            # overlong "/"
    b"\xe0\x80\xaf",        # overlong in three bytes
    b"\xed\xa0\x80",        # a surrogate (U+D800)
    b"\xf4\x90\x80\x80",    # past U+10FFFF
    b"\xe2\x82",            # truncated
    b"\x80",                # a stray continuation byte
]


@pytest.mark.parametrize("bad", NOT_UTF8, ids=lambda b: b.hex())
def test_key_that_is_not_utf8_is_refused(server, s3, bucket, bad):
    key = b"dir/k" + bad
    path = b"/" + bucket.encode() + b"/" + key
    assert_error(call(server, "PUT", path, body=b"data"), 400, "InvalidArgument")
    assert_error(call(server, "GET", path), 400, "InvalidArgument")
    assert_error(call(server, "DELETE", path), 400, "InvalidArgument")
    assert_error(call(server, "POST", path, query=[("uploads", "")]), 400, "InvalidArgument")
    head = raw_exchange(server, request_bytes(server, "HEAD", path))
    assert head is not None and head.status == 400, head
    # Nothing was stored.
    assert s3.list_objects_v2(Bucket=bucket).get("KeyCount") == 0


@pytest.mark.parametrize("query", [
    [("prefix", b"p\xff")],
    [("marker", b"\xc0\xaf")],
    [("delimiter", b"\xed\xa0\x80")],
    [("list-type", "2"), ("start-after", b"\xff")],
    [("list-type", "2"), ("continuation-token", b"\xfe")],
    [("versions", ""), ("key-marker", b"\xff")],
    [("uploads", ""), ("prefix", b"\xff")],
], ids=lambda q: "&".join(k for k, _ in q))
def test_listing_parameters_that_are_not_utf8_are_refused(server, bucket, query):
    assert_error(call(server, "GET", f"/{bucket}", query=query), 400, "InvalidArgument")


def test_copy_source_that_is_not_utf8_is_invalid_argument(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"x")
    resp = call(server, "PUT", f"/{bucket}/dst",
                headers={"x-amz-copy-source": f"/{bucket}/src%FF"})
    assert_error(resp, 400, "InvalidArgument")
    assert b"Invalid copy source encoding" in resp.body
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["src"]


def xml_bodies(bucket, upload_id):
    """(method, path, query, body template with {} where the bad text goes)."""
    return [
        ("POST", f"/{bucket}", [("delete", "")],
         b"<Delete><Object><Key>k{}</Key></Object></Delete>"),
        ("PUT", f"/{bucket}/obj", [("tagging", "")],
         b"<Tagging><TagSet><Tag><Key>k</Key><Value>v{}</Value></Tag></TagSet></Tagging>"),
        ("PUT", f"/{bucket}", [("tagging", "")],
         b"<Tagging><TagSet><Tag><Key>k{}</Key><Value>v</Value></Tag></TagSet></Tagging>"),
        ("PUT", f"/{bucket}", [("lifecycle", "")],
         b"<LifecycleConfiguration><Rule><ID>r</ID><Filter><Prefix>p{}</Prefix></Filter>"
         b"<Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>"
         b"</LifecycleConfiguration>"),
        ("POST", f"/{bucket}/mp", [("uploadId", upload_id)],
         b"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>e{}</ETag></Part>"
         b"</CompleteMultipartUpload>"),
        ("PUT", f"/{bucket}", [("versioning", "")],
         b"<VersioningConfiguration><Status>Enabled{}</Status></VersioningConfiguration>"),
    ]


BAD_XML_TEXT = NOT_UTF8 + [
    b"\x01",          # a raw control character
    b"\x00",          # a raw NUL
    b"&#x0;",         # references to characters XML 1.0 excludes
    b"&#1;",
    b"&#xFFFE;",
    b"&#xD800;",
]


def test_xml_bodies_that_are_not_utf8_are_malformed(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="obj", Body=b"x")
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="mp")["UploadId"]
    for method, path, query, template in xml_bodies(bucket, upload_id):
        good = template.replace(b"{}", b"")
        for bad in BAD_XML_TEXT:
            body = template.replace(b"{}", bad)
            resp = call(server, method, path, query, body, md5=True)
            assert_error(resp, 400, "MalformedXML")
        # The same document without the bad text is not MalformedXML (the harness is sound).
        resp = call(server, method, path, query, good, md5=True)
        assert xml_code(resp.body) != "MalformedXML", (path, query, resp)
    # Nothing bad was stored: the tags, the lifecycle rule and the bucket's tags read back
    # as the good documents wrote them, and parse.
    for query in ([("tagging", "")], [("lifecycle", "")]):
        resp = call(server, "GET", f"/{bucket}", query)
        assert resp.status == 200, resp
        strict(resp.body)
    assert s3.get_object_tagging(Bucket=bucket, Key="obj")["TagSet"] == [
        {"Key": "k", "Value": "v"}]


# ---------------------------------------------------------------------------------------
# Every XML strata writes is well-formed

# Valid UTF-8 (so S3 allows them in keys) that XML 1.0 cannot carry.
XML_EXCLUDED = ["\x00", "\x01", "\x08", "\x0b", "\x1f", "\ufffe", "\uffff"]


@pytest.mark.parametrize("ch", XML_EXCLUDED, ids=lambda c: f"U+{ord(c):04X}")
def test_error_body_for_a_key_xml_cannot_carry_is_well_formed(server, bucket, ch):
    key = f"a{ch}b"
    # A NUL is refused in a key (as a PUT of one is, below); the others are valid keys.
    status, code = (400, None) if ch == "\x00" else (404, "NoSuchKey")
    resp = call(server, "GET", f"/{bucket}/{key}")
    assert_error(resp, status, code)
    assert strict(resp.body).findtext("Key") == "a\ufffdb"
    resp = call(server, "GET", f"/{bucket}/{key}", query=[("tagging", "")])
    assert_error(resp, status, code)


def test_refused_put_of_a_nul_key_answers_well_formed_xml(server, bucket):
    resp = call(server, "PUT", f"/{bucket}/nul\x00", body=b"x")
    assert resp.status == 400, resp
    strict(resp.body)


CONTROL_KEYS = ["ctl/a\x01b", "ctl/bs\x08", "ctl/tab\tok", "ctl/\x1fz", "ctl/\ufffe"]


def list_raw(server, bucket, query):
    resp = call(server, "GET", f"/{bucket}", query)
    assert resp.status == 200, resp
    return strict(resp.body)


def test_listings_of_control_character_keys_are_well_formed(server, s3, bucket):
    for key in CONTROL_KEYS:
        s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    s3.create_multipart_upload(Bucket=bucket, Key="ctl/a\x01b")
    unquote = urllib.parse.unquote
    # Asked for nothing: the page comes url-encoded, and says so.
    for query in ([], [("list-type", "2")], [("prefix", "ctl/")]):
        root = list_raw(server, bucket, query)
        assert root.findtext(f"{NS}EncodingType") == "url", query
        keys = [unquote(e.text) for e in root.iter(f"{NS}Key")]
        assert sorted(keys) == sorted(CONTROL_KEYS), query
    root = list_raw(server, bucket, [("delimiter", "\x01")])
    assert root.findtext(f"{NS}EncodingType") == "url"
    prefixes = [unquote(e.findtext(f"{NS}Prefix")) for e in root.iter(f"{NS}CommonPrefixes")]
    assert prefixes == ["ctl/a\x01"]
    root = list_raw(server, bucket, [("versions", "")])
    assert root.findtext(f"{NS}EncodingType") == "url"
    assert sorted(unquote(e.text) for e in root.iter(f"{NS}Key")) == sorted(CONTROL_KEYS)
    root = list_raw(server, bucket, [("uploads", "")])
    assert root.findtext(f"{NS}EncodingType") == "url"
    assert [unquote(e.text) for e in root.iter(f"{NS}Key")] == ["ctl/a\x01b"]
    # Asked for url: as before.
    root = list_raw(server, bucket, [("encoding-type", "url")])
    assert sorted(unquote(e.text) for e in root.iter(f"{NS}Key")) == sorted(CONTROL_KEYS)
    # boto3 (which asks for url itself) sees the keys as they are.
    got = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
    assert sorted(got) == sorted(CONTROL_KEYS)


def test_listings_of_plain_keys_stay_unencoded(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="plain key+é", Body=b"x")
    root = list_raw(server, bucket, [])
    assert root.find(f"{NS}EncodingType") is None
    assert [e.text for e in root.iter(f"{NS}Key")] == ["plain key+é"]


def test_multipart_answers_for_control_character_keys_are_well_formed(server, s3, bucket):
    key = "mp/a\x01b"
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    etag = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=1,
                          Body=b"part")["ETag"]
    resp = call(server, "GET", f"/{bucket}/{key}", [("uploadId", upload_id)])
    assert resp.status == 200, resp
    strict(resp.body)  # ListParts
    body = (f"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>{etag}</ETag>"
            f"</Part></CompleteMultipartUpload>").encode()
    resp = call(server, "POST", f"/{bucket}/{key}", [("uploadId", upload_id)], body)
    assert resp.status == 200, resp
    assert strict(resp.body).findtext(f"{NS}Key") == "mp/a\ufffdb"
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == b"part"


# ---------------------------------------------------------------------------------------
# Memory of concurrent XML bodies

MIB = 1 << 20
BODY_BYTES = 4 * MIB - 4096  # just inside CompleteMultipartUpload's 4 MiB cap


def complete_body(size=BODY_BYTES) -> bytes:
    """10,000 parts padded with whitespace (layout, which S3's schema allows) to `size`."""
    parts = [f"<Part><PartNumber>{i}</PartNumber><ETag>\"{i:032x}\"</ETag></Part>".encode()
             for i in range(1, 10_001)]
    pad = (size - len(b"<CompleteMultipartUpload></CompleteMultipartUpload>") -
           sum(len(p) for p in parts)) // len(parts)
    body = b"<CompleteMultipartUpload>" + b"".join(p + b" " * pad for p in parts)
    body += b" " * (size - len(body) - len(b"</CompleteMultipartUpload>"))
    return body + b"</CompleteMultipartUpload>"


def vm_hwm(srv) -> int:
    """The server's peak resident set (VmHWM), in bytes."""
    with open(f"/proc/{srv.proc.pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def reset_hwm(srv):
    """Resets VmHWM to the current RSS (Linux: writing 5 to clear_refs)."""
    with open(f"/proc/{srv.proc.pid}/clear_refs", "w") as f:
        f.write("5")


def concurrent_completes(srv, s3, n):
    """Sends n CompleteMultipartUpload bodies of BODY_BYTES at once. Each request asks
    `Expect: 100-continue`: strata takes a body's share of the budget before it reads the
    body (and only then sends 100 Continue), so every connection first gets 100 or its
    final answer, and the bodies of those that got 100 are then in flight together.
    Returns the (status, code) of each answer and the growth of the server's VmHWM."""
    bucket = f"xmlmem-{srv.port}"
    s3.create_bucket(Bucket=bucket)
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="big")["UploadId"]
    body = complete_body()
    head = request_bytes(srv, "POST", f"/{bucket}/big", [("uploadId", upload_id)], body,
                         headers={"expect": "100-continue"})[:-len(body)]
    conns = [RawConn(srv, timeout=120) for _ in range(n)]
    barrier = threading.Barrier(n, timeout=120)
    results = [None] * n
    reset_hwm(srv)
    before = vm_hwm(srv)

    def run(i):
        conns[i].send(head)
        resp = conns[i].read_response()
        barrier.wait()
        if resp is not None and resp.status == 100:
            conns[i].send(body)
            resp = conns[i].read_response()
        results[i] = (resp.status, resp.code) if resp is not None else (None, "closed")
        if resp is not None and resp.body:
            strict(resp.body)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    for c in conns:
        c.close()
    growth = vm_hwm(srv) - before
    s3.abort_multipart_upload(Bucket=bucket, Key="big", UploadId=upload_id)
    s3.delete_bucket(Bucket=bucket)
    return results, growth


def test_concurrent_large_xml_bodies_share_a_budget(strata_factory, client_factory):
    n = 16
    budget = 32 * MIB
    srv = strata_factory({"server": {"xml_memory": "32MiB"}})
    results, growth = concurrent_completes(srv, client_factory(srv), n)
    print(f"\n{n} x {BODY_BYTES / MIB:.1f} MiB CompleteMultipartUpload bodies at once, "
          f"xml_memory 32 MiB: VmHWM +{growth / MIB:.1f} MiB; answers {sorted(results)}")
    codes = [code for _, code in results]
    # The parts were never uploaded: a body that was parsed gets InvalidPart.
    assert set(codes) <= {"SlowDown", "InvalidPart"}, results
    assert codes.count("SlowDown") >= n // 2, results
    assert codes.count("InvalidPart") >= 1, results
    assert all(status == (503 if code == "SlowDown" else 400) for status, code in results)
    # The budget plus ASan's 32 MiB quarantine of freed blocks and its shadow memory.
    assert growth <= budget + 48 * MIB, f"VmHWM grew by {growth / MIB:.1f} MiB"
    # The server still parses such a body alone.
    results, _ = concurrent_completes(srv, client_factory(srv), 1)
    assert results == [(400, "InvalidPart")]
