#!/usr/bin/env python3
"""Builds the seed corpora of the HTTP-level fuzz harnesses from real traffic.

Starts moto_server, puts a recording proxy in front of it and drives it with boto3 (and
the e2e tests' independent signer for what botocore never sends: signed aws-chunked
bodies, SigV2 headers). Every request is written, byte for byte as the client sent it, to
corpus/http_request/; every response body moto answered with XML to corpus/upstream_xml/
(a selector byte first, see upstream_xml_fuzz.cc); XML request bodies to corpus/xml_body/
and corpus/lifecycle_xml/; the bodies of aws-chunked requests to corpus/payload_decoder/
(with the context the decoder needs first, see payload_decoder_fuzz.cc).

    python3 tests/fuzz/capture_seeds.py          # adds to those corpora

Run it with both interpreters (the current boto3 and Debian's 1.26): the file names are
content hashes, so the two runs add up. Requests are signed for user strata /
strata-secret-key, which is what the harnesses' credential store holds.
"""
import hashlib
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
import s3sign  # noqa: E402

ACCESS, SECRET = "strata", "strata-secret-key"
CORPUS = HERE / "corpus"
# Larger messages (a 5 MiB part) are left out: libFuzzer mutates small inputs faster.
MAX_SEED = 96 * 1024


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def save(kind, data: bytes, prefix=b""):
    if len(data) > MAX_SEED:
        return
    d = CORPUS / kind
    d.mkdir(parents=True, exist_ok=True)
    blob = prefix + data
    (d / hashlib.sha1(blob).hexdigest()[:16]).write_bytes(blob)


def read_message(f, is_response=False, head_only=False, on_head=None):
    """One HTTP/1.1 message from a buffered socket file: (raw bytes, head, body)."""
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        line = f.readline()
        if not line:
            return None
        head += line
    lines = head.decode("latin-1").split("\r\n")
    fields = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            fields[k.strip().lower()] = v.strip()
    if on_head:
        on_head(fields)
    body = b""
    status = int(lines[0].split()[1]) if is_response else 0
    if head_only or status in (204, 304) or 100 <= status < 200:
        pass
    elif "chunked" in fields.get("transfer-encoding", ""):
        while True:
            size_line = f.readline()
            body += size_line
            size = int(size_line.split(b";")[0].strip(), 16)
            if size == 0:
                while True:  # trailers, then the blank line
                    t = f.readline()
                    body += t
                    if t in (b"\r\n", b""):
                        break
                break
            body += f.read(size + 2)
    elif "content-length" in fields:
        body = f.read(int(fields["content-length"]))
    elif is_response:
        body = f.read()
    return head + body, fields, body, lines[0]


def upstream_selector(request_line, status_line):
    """Which parser of storage/upstream/s3_responses.h reads this answer (upstream_xml_fuzz)."""
    method, target = request_line.split()[:2]
    path, _, query = target.partition("?")
    if int(status_line.split()[1]) >= 300:
        return 0  # ParseErrorBody
    if method == "GET" and path == "/":
        return 1  # ParseListBuckets
    if method == "GET" and "versioning" in query:
        return 5  # ParseVersioningStatus
    if method == "GET":
        return 2  # ParseListObjectsV2
    if method == "POST" and "uploads" in query:
        return 3  # ParseUploadId
    if method == "POST" and "uploadId" in query:
        return 4  # ParseCompleteResult
    return 0


def body_selector(request_line):
    """Which body parser of gateway/ reads this request's body (xml_body_fuzz), or 0x10 for
    lifecycle_xml_fuzz, or None."""
    method, target = request_line.split()[:2]
    path, _, query = target.partition("?")
    names = [q.split("=")[0] for q in query.split("&")]
    if method == "POST" and "delete" in names:
        return 0
    if method == "POST" and "uploadId" in names:
        return 1
    if method == "PUT" and "tagging" in names:
        return 2
    if method == "PUT" and "versioning" in names:
        return 3
    if method == "PUT" and path.count("/") == 1 and not query:
        return 4  # CreateBucket
    if method == "POST" and "restore" in names:
        return 5
    if method == "PUT" and "lifecycle" in names:
        return 0x10
    return None


class RecordingProxy:
    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            conn, _ = self.sock.accept()
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def serve(self, conn):
        f = conn.makefile("rb")
        while True:
            def expect(fields):
                if fields.get("expect", "").lower() == "100-continue":
                    conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")

            msg = read_message(f, on_head=expect)
            if msg is None:
                break
            raw, fields, body, start = msg
            save("http_request", raw)
            mode = {"STREAMING-AWS4-HMAC-SHA256-PAYLOAD": b"\x02",
                    "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER": b"\x03",
                    "STREAMING-UNSIGNED-PAYLOAD-TRAILER": b"\x04"}.get(
                        fields.get("x-amz-content-sha256", ""))
            if mode and "chunked" not in fields.get("transfer-encoding", ""):
                # What the decoder is given besides the body: the date and seed signature
                # the chunk signatures chain from, and the declared decoded length.
                date = fields.get("x-amz-date", "")
                seed = fields.get("authorization", "").rpartition("Signature=")[2]
                length = fields.get("x-amz-decoded-content-length", "-1")
                save("payload_decoder", body, mode + f"{date}\n{seed}\n{length}\n".encode())
            # One upstream connection per request, so a response without a length is
            # simply read to its end.
            up = socket.create_connection(("127.0.0.1", self.upstream_port))
            up.sendall(raw.replace(b"Expect: 100-continue\r\n", b""))
            uf = up.makefile("rb")
            resp = read_message(uf, is_response=True, head_only=start.startswith("HEAD "))
            while resp is not None and resp[3].split()[1].startswith("1"):
                resp = read_message(uf, is_response=True, head_only=start.startswith("HEAD "))
            up.close()
            if resp is None:
                break
            rraw, rfields, rbody, rstart = resp
            if rbody.lstrip().startswith(b"<"):
                save("upstream_xml", rbody, bytes([upstream_selector(start, rstart)]))
            for name in ("date", "last-modified"):
                if name in rfields:
                    save("http_time", rfields[name].encode(), b"\x00")
            selector = body_selector(start)
            if selector is not None and body.lstrip().startswith(b"<"):
                save("xml_body" if selector < 0x10 else "lifecycle_xml", body,
                     bytes([selector]) if selector < 0x10 else b"")
            conn.sendall(rraw.replace(b"Connection: close\r\n", b""))
        conn.close()


def boto3_traffic(endpoint):
    import boto3
    from botocore.config import Config

    def client(**kw):
        return boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ACCESS,
                            aws_secret_access_key=SECRET, region_name="us-east-1",
                            config=Config(s3={"addressing_style": "path"}, **kw))

    s3 = client()
    ok = []

    def run(name, fn):
        try:
            fn()
            ok.append(name)
        except Exception as e:  # moto refusing something still leaves the request captured
            print(f"  {name}: {type(e).__name__}: {e}", file=sys.stderr)

    run("create_bucket", lambda: s3.create_bucket(Bucket="seeds"))
    run("create_bucket_eu", lambda: s3.create_bucket(
        Bucket="seeds-eu", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"}))
    run("put_object", lambda: s3.put_object(Bucket="seeds", Key="dir/hello world.txt",
                                            Body=b"hello, strata\n", ContentType="text/plain",
                                            Metadata={"owner": "fuzz"}, Tagging="a=1&b=two"))
    run("put_crc32c", lambda: s3.put_object(Bucket="seeds", Key="crc", Body=b"x" * 300,
                                            ChecksumAlgorithm="CRC32"))
    run("put_sha256", lambda: s3.put_object(Bucket="seeds", Key="sha", Body=b"y" * 100,
                                            ChecksumAlgorithm="SHA256"))
    run("get_range", lambda: s3.get_object(Bucket="seeds", Key="dir/hello world.txt",
                                           Range="bytes=0-4", IfMatch="*"))
    run("head", lambda: s3.head_object(Bucket="seeds", Key="dir/hello world.txt"))
    run("head_missing", lambda: s3.head_object(Bucket="seeds", Key="missing"))
    run("get_missing", lambda: s3.get_object(Bucket="seeds", Key="missing"))
    run("get_nobucket", lambda: s3.get_object(Bucket="nobucket", Key="k"))
    run("list_v2", lambda: s3.list_objects_v2(Bucket="seeds", Prefix="dir/", Delimiter="/",
                                              MaxKeys=5, EncodingType="url"))
    run("list_v2_all", lambda: s3.list_objects_v2(Bucket="seeds", MaxKeys=1))
    run("list_v1", lambda: s3.list_objects(Bucket="seeds", Marker="a"))
    run("list_buckets", lambda: s3.list_buckets())
    run("list_versions", lambda: s3.list_object_versions(Bucket="seeds"))
    run("copy", lambda: s3.copy_object(Bucket="seeds", Key="copy",
                                       CopySource={"Bucket": "seeds", "Key": "crc"},
                                       MetadataDirective="REPLACE", Metadata={"m": "v"}))
    run("tagging", lambda: s3.put_object_tagging(
        Bucket="seeds", Key="crc",
        Tagging={"TagSet": [{"Key": "project", "Value": "blue"}, {"Key": "e", "Value": ""}]}))
    run("get_tagging", lambda: s3.get_object_tagging(Bucket="seeds", Key="crc"))
    run("bucket_tagging", lambda: s3.put_bucket_tagging(
        Bucket="seeds", Tagging={"TagSet": [{"Key": "team", "Value": "ml"}]}))
    run("versioning", lambda: s3.put_bucket_versioning(
        Bucket="seeds", VersioningConfiguration={"Status": "Enabled"}))
    run("get_versioning", lambda: s3.get_bucket_versioning(Bucket="seeds"))
    run("lifecycle", lambda: s3.put_bucket_lifecycle_configuration(
        Bucket="seeds", LifecycleConfiguration={"Rules": [
            {"ID": "expire-logs", "Status": "Enabled", "Filter": {"Prefix": "logs/"},
             "Expiration": {"Days": 30},
             "Transitions": [{"Days": 7, "StorageClass": "STANDARD_IA"}],
             "NoncurrentVersionExpiration": {"NoncurrentDays": 10}},
            {"ID": "tags", "Status": "Disabled",
             "Filter": {"And": {"Prefix": "t/", "Tags": [{"Key": "k", "Value": "v"}],
                                "ObjectSizeGreaterThan": 10}},
             "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 2}}]}))
    run("lifecycle_dates", lambda: s3.put_bucket_lifecycle_configuration(
        Bucket="seeds", LifecycleConfiguration={"Rules": [
            {"ID": "by-date", "Status": "Enabled", "Filter": {"Tag": {"Key": "t", "Value": "1"}},
             "Expiration": {"Date": "2030-01-01T00:00:00Z"}},
            {"ID": "noncurrent", "Status": "Enabled", "Filter": {},
             "Expiration": {"ExpiredObjectDeleteMarker": True},
             "NoncurrentVersionTransitions": [{"NoncurrentDays": 30, "StorageClass": "GLACIER",
                                               "NewerNoncurrentVersions": 2}],
             "NoncurrentVersionExpiration": {"NoncurrentDays": 90,
                                             "NewerNoncurrentVersions": 3}},
            {"ID": "sizes", "Status": "Enabled",
             "Filter": {"ObjectSizeLessThan": 1048576},
             "Transitions": [{"Date": "2031-06-01T00:00:00Z", "StorageClass": "GLACIER"}]}]}))
    run("lifecycle_prefix", lambda: s3.put_bucket_lifecycle_configuration(
        Bucket="seeds", LifecycleConfiguration={"Rules": [
            {"Prefix": "old/", "Status": "Enabled", "Expiration": {"Days": 1}}]}))
    run("delete_quiet", lambda: s3.delete_objects(Bucket="seeds", Delete={
        "Objects": [{"Key": "a&b<c>"}, {"Key": "dir/x y"}], "Quiet": True}))
    run("get_lifecycle", lambda: s3.get_bucket_lifecycle_configuration(Bucket="seeds"))
    run("delete_objects", lambda: s3.delete_objects(Bucket="seeds", Delete={
        "Objects": [{"Key": "copy"}, {"Key": "sha", "VersionId": "null"}], "Quiet": False}))

    def multipart():
        up = s3.create_multipart_upload(Bucket="seeds", Key="mp", ChecksumAlgorithm="CRC32")
        part = 5 * 1024 * 1024
        p1 = s3.upload_part(Bucket="seeds", Key="mp", UploadId=up["UploadId"], PartNumber=1,
                            Body=b"a" * part, ChecksumAlgorithm="CRC32")
        p2 = s3.upload_part(Bucket="seeds", Key="mp", UploadId=up["UploadId"], PartNumber=2,
                            Body=b"b" * 10, ChecksumAlgorithm="CRC32")
        s3.list_parts(Bucket="seeds", Key="mp", UploadId=up["UploadId"])
        s3.list_multipart_uploads(Bucket="seeds")
        s3.complete_multipart_upload(
            Bucket="seeds", Key="mp", UploadId=up["UploadId"],
            MultipartUpload={"Parts": [
                {"PartNumber": 1, "ETag": p1["ETag"], "ChecksumCRC32": p1.get("ChecksumCRC32")},
                {"PartNumber": 2, "ETag": p2["ETag"], "ChecksumCRC32": p2.get("ChecksumCRC32")}]})
        up2 = s3.create_multipart_upload(Bucket="seeds", Key="mp2")
        s3.abort_multipart_upload(Bucket="seeds", Key="mp2", UploadId=up2["UploadId"])
        s3.complete_multipart_upload(Bucket="seeds", Key="mp2", UploadId="nope",
                                     MultipartUpload={"Parts": [{"PartNumber": 1,
                                                                 "ETag": "\"x\""}]})

    run("multipart", multipart)
    run("restore", lambda: s3.restore_object(Bucket="seeds", Key="crc", RestoreRequest={
        "Days": 2, "GlacierJobParameters": {"Tier": "Standard"}}))
    run("attributes", lambda: s3.get_object_attributes(
        Bucket="seeds", Key="crc", ObjectAttributes=["ETag", "Checksum", "ObjectSize"]))
    run("delete", lambda: s3.delete_object(Bucket="seeds", Key="dir/hello world.txt"))

    # Presigned URLs (SigV4 query), fetched as a browser or curl would.
    for method, params in (("get_object", {"Bucket": "seeds", "Key": "crc"}),
                           ("put_object", {"Bucket": "seeds", "Key": "pre/signed key"})):
        url = s3.generate_presigned_url(method, Params=params, ExpiresIn=3600)
        req = urllib.request.Request(url, data=b"presigned" if method == "put_object" else None,
                                     method="PUT" if method == "put_object" else "GET")
        run("presign_" + method, lambda req=req: urllib.request.urlopen(req).read())

    # SigV2 (header and presigned query): still spoken by old tools.
    v2 = client(signature_version="s3")
    run("v2_put", lambda: v2.put_object(Bucket="seeds", Key="v2", Body=b"sigv2"))
    run("v2_list", lambda: v2.list_objects(Bucket="seeds", Prefix="v"))
    v2q = client(signature_version="s3-query")
    url = v2q.generate_presigned_url("get_object", Params={"Bucket": "seeds", "Key": "v2"})
    run("v2_presign", lambda: urllib.request.urlopen(url).read())
    print(f"  boto3 {boto3.__version__}: {len(ok)} operations answered", file=sys.stderr)


def signer_traffic(port):
    """What botocore never sends: signed aws-chunked bodies, with and without trailers."""
    signer = s3sign.SigV4(ACCESS, SECRET)
    host = f"127.0.0.1:{port}"

    def send(raw):
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(raw)
            s.shutdown(socket.SHUT_WR)
            while s.recv(65536):
                pass

    for size, chunk in ((300, 128), (0, 64), (70000, 65536)):
        data = bytes((i * 7) % 251 for i in range(size))
        head, body = s3sign.streaming_put(signer, host, "/seeds/chunked", data, chunk_size=chunk)
        send(head + body)
    # A signed body with a signed trailer (x-amz-checksum-crc32 after the last chunk).
    amz_date = s3sign.amz_now()
    data = b"trailer data " * 20
    mode = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
    headers = {"host": host, "x-amz-date": amz_date, "x-amz-content-sha256": mode,
               "content-encoding": "aws-chunked", "x-amz-decoded-content-length": str(len(data)),
               "x-amz-trailer": "x-amz-checksum-crc32"}
    seed = signer.signature("PUT", "/seeds/trailer", [], headers, mode)
    prev, body = seed, b""
    for piece in (data[:128], data[128:], b""):
        prev = signer.chunk_signature(amz_date, prev, piece)
        body += f"{len(piece):x};chunk-signature={prev}\r\n".encode() + piece
        body += b"\r\n" if piece else b""
    import base64
    import zlib
    crc = base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()
    trailer = f"x-amz-checksum-crc32:{crc}\n"
    sts = "\n".join(["AWS4-HMAC-SHA256-TRAILER", amz_date, signer.scope(amz_date), prev,
                     hashlib.sha256(trailer.encode()).hexdigest()])
    import hmac
    tsig = hmac.new(signer.key(amz_date), sts.encode(), hashlib.sha256).hexdigest()
    body += f"x-amz-checksum-crc32:{crc}\r\nx-amz-trailer-signature:{tsig}\r\n\r\n".encode()
    headers["content-length"] = str(len(body))
    auth = (f"AWS4-HMAC-SHA256 Credential={ACCESS}/{signer.scope(amz_date)},"
            f"SignedHeaders={';'.join(sorted(headers))},Signature={seed}")
    head = "PUT /seeds/trailer HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    send((head + f"authorization: {auth}\r\n\r\n").encode() + body)
    # A plain signed GET and a request with an Expect header, as raw sockets send them.
    send(s3sign.signed_request_bytes(signer, "GET", host, "/seeds", query=[("list-type", "2"),
                                                                             ("prefix", "a b")]))
    send(s3sign.signed_request_bytes(signer, "PUT", host, "/seeds/expect", body=b"12345",
                                     extra_headers={"expect": "100-continue"}))


def derived_seeds():
    """Seeds of the harnesses of smaller parsers, cut from the captured traffic: the paths,
    queries, header values and dates of the requests (auth_canonical: selector byte of
    auth_canonical_fuzz.cc first), the XML dates of the answers (http_time), and the
    configurations the docs and the e2e tests use (config)."""
    import re
    for f in sorted((CORPUS / "http_request").iterdir()):
        head = f.read_bytes().split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
        target = head[0].split()[1]
        path, _, query = target.partition("?")
        save("auth_canonical", path.encode(), b"\x00")
        save("auth_canonical", query.encode(), b"\x01")
        for line in head[1:]:
            name, _, value = line.partition(":")
            save("auth_canonical", value.encode(), b"\x02")
            save("auth_canonical", name.encode(), b"\x06")
            if name.lower() == "x-amz-date":
                save("auth_canonical", value.strip().encode(), b"\x03")
            if name.lower() in ("date", "if-modified-since", "if-unmodified-since"):
                save("auth_canonical", value.strip().encode(), b"\x04")
            if name.lower() in ("content-length", "x-amz-decoded-content-length"):
                save("auth_canonical", value.strip().encode(), b"\x05")
    for f in sorted((CORPUS / "upstream_xml").iterdir()):
        for m in re.finditer(rb"<(?:LastModified|CreationDate|Initiated)>([^<]*)<", f.read_bytes()):
            save("http_time", m.group(1), b"\x01")
    # Configurations: the shipped default, the e2e tests' variant of it, and one with every
    # section the README documents (an upstream tier, write-back, lifecycle, prefetch).
    conf = (HERE.parent.parent / "conf" / "strata.toml").read_bytes()
    save("config", conf)
    sys.path.insert(0, str(HERE.parent / "e2e"))
    try:
        import conftest
        import upstream
        cfg = conftest.test_config(pathlib.Path("/tmp/strata-fuzz-seeds"), 9000)
        save("config", conftest.dump_toml(cfg).encode())
        endpoint = type("Endpoint", (), {"endpoint": "http://127.0.0.1:9001"})
        overrides = upstream.cold_config(endpoint, dirty_limit="1MiB",
                                         tier={"revalidate_after": "2s"})
        save("config", conftest.dump_toml(conftest.test_config(
            pathlib.Path("/tmp/strata-fuzz-seeds"), 9000, overrides)).encode())
    except ImportError as e:
        print(f"  (no e2e configurations: {e})", file=sys.stderr)
    save("config", conf + b"""
[[tiers]]
name = "cold"
kind = "s3"
endpoint = "https://s3.us-east-1.amazonaws.com"
access_key = "AKIAIOSFODNN7EXAMPLE"
secret_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
region = "us-east-1"
revalidate_after = "5m"
ca_file = "/etc/ssl/upstream-ca.pem"
""")


def main():
    moto = shutil.which("moto_server")
    if not moto:
        sys.exit("capture_seeds.py: moto_server is not on PATH")
    moto_port = free_port()
    proc = subprocess.Popen([moto, "-H", "127.0.0.1", "-p", str(moto_port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", moto_port)).close()
                break
            except OSError:
                time.sleep(0.1)
        proxy = RecordingProxy(moto_port)
        boto3_traffic(f"http://127.0.0.1:{proxy.port}")
        signer_traffic(proxy.port)
        derived_seeds()
    finally:
        proc.terminate()
        proc.wait()
    for kind in sorted(os.listdir(CORPUS)):
        print(f"  {kind}: {len(os.listdir(CORPUS / kind))} files", file=sys.stderr)


if __name__ == "__main__":
    main()
