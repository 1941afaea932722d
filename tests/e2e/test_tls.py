"""HTTPS: a throwaway self-signed certificate, and boto3's default PutObject over TLS,
which (boto3 >= 1.36) sends aws-chunked with a trailing CRC32 checksum."""
import hashlib
import socket
import ssl

import pytest
import requests

from conftest import (make_client, presign_url, raises_s3, self_signed_cert, sha256_stream,
                      write_random_file)


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    return self_signed_cert(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def tls_server(strata_factory, cert):
    crt, key = cert
    return strata_factory({"server": {"tls_cert": str(crt), "tls_key": str(key)}})


def capture_put_headers(client):
    seen = []

    def hook(request, **_):
        seen.append({k.lower(): (v.decode() if isinstance(v, bytes) else v)
                     for k, v in request.headers.items()})

    client.meta.events.register("before-send.s3.PutObject", hook)
    return seen


@pytest.mark.needs_new_boto3
def test_default_put_over_https_uses_trailing_checksum(tls_server, tmp_path):
    s3 = make_client(tls_server)
    assert tls_server.endpoint.startswith("https://")
    s3.create_bucket(Bucket="tls-bucket")
    seen = capture_put_headers(s3)

    small = b"over TLS with a trailing checksum\n" * 1000
    put = s3.put_object(Bucket="tls-bucket", Key="small", Body=small)
    assert put["ETag"] == '"' + hashlib.md5(small).hexdigest() + '"'
    # Prove the request really was aws-chunked with a CRC32 trailer, or this test means little.
    h = seen[-1]
    assert "aws-chunked" in h.get("content-encoding", ""), h
    assert h.get("x-amz-trailer", "").lower() == "x-amz-checksum-crc32", h
    assert h.get("x-amz-content-sha256") == "STREAMING-UNSIGNED-PAYLOAD-TRAILER", h
    assert h.get("x-amz-decoded-content-length") == str(len(small)), h
    assert put.get("ChecksumCRC32"), "S3 echoes the trailing checksum it verified"

    got = s3.get_object(Bucket="tls-bucket", Key="small")
    assert got["Body"].read() == small
    assert "aws-chunked" not in got.get("ContentEncoding", "")

    # A file body, several chunks long.
    path = tmp_path / "twenty.bin"
    sha, md5 = write_random_file(path, 20 * 1024 * 1024 + 3)
    with open(path, "rb") as f:
        put = s3.put_object(Bucket="tls-bucket", Key="file", Body=f)
    assert put["ETag"] == f'"{md5}"'
    got = s3.get_object(Bucket="tls-bucket", Key="file")
    assert sha256_stream(got["Body"]) == (sha, 20 * 1024 * 1024 + 3)

    for key in ("small", "file"):
        s3.delete_object(Bucket="tls-bucket", Key=key)
    s3.delete_bucket(Bucket="tls-bucket")


def test_https_basic_operations(tls_server, cert):
    # Works with any boto3 (the Debian run too): SigV4 over TLS, presigned GET via requests.
    s3 = make_client(tls_server)
    s3.create_bucket(Bucket="tls-basic")
    s3.put_object(Bucket="tls-basic", Key="k", Body=b"secure")
    assert s3.get_object(Bucket="tls-basic", Key="k")["Body"].read() == b"secure"
    url = presign_url(tls_server, "GET", "tls-basic", "k")
    assert url.startswith("https://")
    r = requests.get(url, verify=str(cert[0]), timeout=30)
    assert r.status_code == 200 and r.content == b"secure"
    bad = make_client(tls_server, secret_key="wrong")
    with raises_s3("SignatureDoesNotMatch", 403):
        bad.list_buckets()
    s3.delete_object(Bucket="tls-basic", Key="k")
    s3.delete_bucket(Bucket="tls-basic")


def test_plain_http_to_tls_port_does_not_break_server(tls_server, cert):
    with socket.create_connection((tls_server.host, tls_server.port), timeout=10) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        try:
            s.recv(4096)  # an alert, a 400 or EOF: any of them; just not a hang
        except (ConnectionResetError, socket.timeout):
            pass
    # A failed handshake must not stop the server.
    ctx = ssl.create_default_context(cafile=str(cert[0]))
    with socket.create_connection((tls_server.host, tls_server.port), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
    assert data.startswith(b"HTTP/1.1 403"), data[:200]
    assert b"<Code>AccessDenied</Code>" in data


def test_untrusted_client_sees_certificate_error(tls_server):
    with pytest.raises(requests.exceptions.SSLError):
        requests.get(tls_server.endpoint + "/", timeout=10)  # default CA store: untrusted


def test_tls_server_graceful_shutdown(tls_server):
    s3 = make_client(tls_server)
    s3.list_buckets()
    tls_server.stop()  # fails the test unless it exits 0
