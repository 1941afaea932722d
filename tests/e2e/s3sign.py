"""A small, independent SigV4 signer for requests that botocore cannot build.

botocore never sends STREAMING-AWS4-HMAC-SHA256-PAYLOAD (signed aws-chunked) bodies and
never sends deliberately broken requests, so the tests that need those build them here.
The implementation is checked against AWS's published test vectors in test_s3sign.py.
"""
import datetime
import hashlib
import hmac
import urllib.parse

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
STREAMING_PAYLOAD = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def amz_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def signing_key(secret: str, date: str, region: str, service: str = "s3") -> bytes:
    k = _hmac(("AWS4" + secret).encode(), date)
    k = _hmac(k, region)
    k = _hmac(k, service)
    return _hmac(k, "aws4_request")


def uri_encode(s: str, encode_slash: bool = True) -> str:
    safe = "-_.~" + ("" if encode_slash else "/")
    return urllib.parse.quote(s, safe=safe)


def canonical_query(query) -> str:
    pairs = sorted((uri_encode(k), uri_encode(v)) for k, v in query)
    return "&".join(f"{k}={v}" for k, v in pairs)


class SigV4:
    """Signs one request. `headers` must include host and x-amz-date; names are lowered."""

    def __init__(self, access_key, secret_key, region="us-east-1", service="s3"):
        self.access_key = access_key
        self.secret_key = secret_key
        self.region = region
        self.service = service

    def scope(self, amz_date: str) -> str:
        return f"{amz_date[:8]}/{self.region}/{self.service}/aws4_request"

    def key(self, amz_date: str) -> bytes:
        return signing_key(self.secret_key, amz_date[:8], self.region, self.service)

    def canonical_request(self, method, path, query, headers, payload_hash):
        names = sorted(headers)
        canon_headers = "".join(f"{n}:{' '.join(str(headers[n]).split())}\n" for n in names)
        return "\n".join([
            method,
            uri_encode(path, encode_slash=False),
            canonical_query(query),
            canon_headers,
            ";".join(names),
            payload_hash,
        ])

    def signature(self, method, path, query, headers, payload_hash):
        headers = {k.lower(): v for k, v in headers.items()}
        amz_date = headers["x-amz-date"]
        creq = self.canonical_request(method, path, query, headers, payload_hash)
        sts = "\n".join([
            "AWS4-HMAC-SHA256", amz_date, self.scope(amz_date),
            hashlib.sha256(creq.encode()).hexdigest(),
        ])
        return hmac.new(self.key(amz_date), sts.encode(), hashlib.sha256).hexdigest()

    def authorization(self, method, path, query, headers, payload_hash):
        headers = {k.lower(): v for k, v in headers.items()}
        sig = self.signature(method, path, query, headers, payload_hash)
        return (f"AWS4-HMAC-SHA256 Credential={self.access_key}/{self.scope(headers['x-amz-date'])},"
                f"SignedHeaders={';'.join(sorted(headers))},Signature={sig}")

    def chunk_signature(self, amz_date, previous_signature, data: bytes) -> str:
        sts = "\n".join([
            "AWS4-HMAC-SHA256-PAYLOAD", amz_date, self.scope(amz_date), previous_signature,
            EMPTY_SHA256, hashlib.sha256(data).hexdigest(),
        ])
        return hmac.new(self.key(amz_date), sts.encode(), hashlib.sha256).hexdigest()


def chunked_length(decoded_length: int, chunk_size: int) -> int:
    """Content-Length of a signed aws-chunked body (each chunk header carries 64 hex)."""
    def one(n):
        return len(f"{n:x}") + len(";chunk-signature=") + 64 + 2 + n + 2
    full, rest = divmod(decoded_length, chunk_size)
    total = full * one(chunk_size) + (one(rest) if rest else 0) + one(0)
    return total


def signed_chunks(signer: SigV4, amz_date: str, seed_signature: str, data: bytes,
                  chunk_size: int, corrupt_chunk: int = -1):
    """Yields the encoded aws-chunked body; chunk number `corrupt_chunk` gets a bad signature."""
    prev = seed_signature
    pieces = [data[i:i + chunk_size] for i in range(0, len(data), chunk_size)] + [b""]
    for i, piece in enumerate(pieces):
        sig = signer.chunk_signature(amz_date, prev, piece)
        prev = sig
        sent = sig
        if i == corrupt_chunk:
            sent = ("0" if sig[0] != "0" else "1") + sig[1:]
        yield f"{len(piece):x};chunk-signature={sent}\r\n".encode() + piece + b"\r\n"


def streaming_put(signer: SigV4, host: str, path: str, data: bytes, chunk_size: int = 65536,
                  corrupt_chunk: int = -1, amz_date: str = None, extra_headers=None):
    """Builds a signed aws-chunked PUT: returns (header bytes, body bytes)."""
    amz_date = amz_date or amz_now()
    headers = {
        "host": host,
        "x-amz-date": amz_date,
        "x-amz-content-sha256": STREAMING_PAYLOAD,
        "content-encoding": "aws-chunked",
        "x-amz-decoded-content-length": str(len(data)),
        "content-length": str(chunked_length(len(data), chunk_size)),
    }
    headers.update({k.lower(): v for k, v in (extra_headers or {}).items()})
    seed = signer.signature("PUT", path, [], headers, STREAMING_PAYLOAD)
    auth = (f"AWS4-HMAC-SHA256 Credential={signer.access_key}/{signer.scope(amz_date)},"
            f"SignedHeaders={';'.join(sorted(headers))},Signature={seed}")
    body = b"".join(signed_chunks(signer, amz_date, seed, data, chunk_size, corrupt_chunk))
    assert len(body) == int(headers["content-length"])
    head = f"PUT {uri_encode(path, encode_slash=False)} HTTP/1.1\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    head += f"authorization: {auth}\r\n\r\n"
    return head.encode(), body


def signed_request_bytes(signer: SigV4, method: str, host: str, path: str, query=(),
                         body: bytes = b"", extra_headers=None, payload_hash=None,
                         amz_date: str = None, authorization: str = None) -> bytes:
    """A complete signed HTTP/1.1 request as bytes (for raw-socket tests)."""
    amz_date = amz_date or amz_now()
    payload_hash = payload_hash or hashlib.sha256(body).hexdigest()
    headers = {"host": host, "x-amz-date": amz_date, "x-amz-content-sha256": payload_hash}
    if body or method in ("PUT", "POST"):
        headers["content-length"] = str(len(body))
    headers.update({k.lower(): v for k, v in (extra_headers or {}).items()})
    auth = authorization or signer.authorization(method, path, list(query), headers, payload_hash)
    target = uri_encode(path, encode_slash=False)
    if query:
        target += "?" + "&".join(
            uri_encode(k) + (("=" + uri_encode(v)) if v != "" else "") for k, v in query)
    head = f"{method} {target} HTTP/1.1\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    head += f"authorization: {auth}\r\nconnection: close\r\n\r\n"
    return head.encode() + body
