"""CORS: Put/Get/DeleteBucketCors with S3's checks, the preflight OPTIONS request answered
from a bucket's rules (origin, method and header matching with wildcards, MaxAgeSeconds,
403 AccessForbidden "CORSResponse" when no rule allows), the Access-Control-* headers on the
requests a rule allows (errors too), and a real browser: headless Chromium loads a page
from another origin (a second loopback port) whose script reads a public object from
strata and writes one, with the preflight its custom header needs."""
import http.server
import json
import re
import subprocess
import threading

import pytest
import requests

from conftest import free_port, raises_s3, xml_code
from require import require_tool

PAGE_ORIGIN_HOST = "127.0.0.1"


def rules(*rule_list):
    return {"CORSRules": list(rule_list)}


def test_put_get_delete(s3, bucket):
    with raises_s3("NoSuchCORSConfiguration", 404):
        s3.get_bucket_cors(Bucket=bucket)
    config = rules(
        {"AllowedOrigins": ["http://www.example1.com"], "AllowedMethods": ["PUT", "POST"],
         "AllowedHeaders": ["*"]},
        {"ID": "reads", "AllowedOrigins": ["*"], "AllowedMethods": ["GET", "HEAD"],
         "ExposeHeaders": ["ETag"], "MaxAgeSeconds": 3000})
    s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=config)
    got = s3.get_bucket_cors(Bucket=bucket)["CORSRules"]
    assert got[0]["AllowedOrigins"] == ["http://www.example1.com"]
    assert got[0]["AllowedMethods"] == ["PUT", "POST"] and got[0]["AllowedHeaders"] == ["*"]
    assert got[1]["ID"] == "reads" and got[1]["MaxAgeSeconds"] == 3000
    assert got[1]["ExposeHeaders"] == ["ETag"]
    with raises_s3("InvalidRequest", 400):
        s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=rules(
            {"AllowedOrigins": ["*"], "AllowedMethods": ["PATCH"]}))
    with raises_s3("InvalidRequest", 400):
        s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=rules(
            {"AllowedOrigins": ["http://*.*.com"], "AllowedMethods": ["GET"]}))
    with raises_s3("MalformedXML", 400):
        s3.put_bucket_cors(Bucket=bucket, CORSConfiguration={"CORSRules": []})
    assert len(s3.get_bucket_cors(Bucket=bucket)["CORSRules"]) == 2  # unchanged
    s3.delete_bucket_cors(Bucket=bucket)
    with raises_s3("NoSuchCORSConfiguration", 404):
        s3.get_bucket_cors(Bucket=bucket)


def preflight(server, bucket, key, origin, method, headers=None):
    h = {"Origin": origin, "Access-Control-Request-Method": method}
    if headers:
        h["Access-Control-Request-Headers"] = headers
    return requests.options(f"{server.endpoint}/{bucket}/{key}", headers=h, timeout=30)


def test_preflight_is_answered_from_the_rules(server, s3, bucket):
    r = preflight(server, bucket, "k", "http://a.example.com", "GET")
    assert (r.status_code, xml_code(r.content)) == (403, "AccessForbidden"), r.text
    assert "CORSResponse" in r.text
    s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=rules(
        {"AllowedOrigins": ["http://*.example.com"], "AllowedMethods": ["PUT", "GET"],
         "AllowedHeaders": ["x-amz-*", "content-type"], "MaxAgeSeconds": 600},
        {"AllowedOrigins": ["*"], "AllowedMethods": ["GET"]}))
    r = preflight(server, bucket, "k", "http://a.example.com", "PUT",
                  "Content-Type, X-Amz-Meta-Src")
    assert r.status_code == 200, r.text
    assert r.headers["Access-Control-Allow-Origin"] == "http://a.example.com"
    assert r.headers["Access-Control-Allow-Methods"] == "PUT, GET"
    assert r.headers["Access-Control-Allow-Headers"] == "Content-Type, X-Amz-Meta-Src"
    assert r.headers["Access-Control-Max-Age"] == "600"
    assert r.headers["Access-Control-Allow-Credentials"] == "true"
    assert "Origin" in r.headers["Vary"]
    # A header no rule allows, a method no rule of that origin allows.
    r = preflight(server, bucket, "k", "http://a.example.com", "PUT", "authorization-x")
    assert (r.status_code, xml_code(r.content)) == (403, "AccessForbidden")
    r = preflight(server, bucket, "k", "http://elsewhere.org", "PUT")
    assert (r.status_code, xml_code(r.content)) == (403, "AccessForbidden")
    # The catch-all rule: any origin may GET.
    r = preflight(server, bucket, "", "http://elsewhere.org", "GET")
    assert r.status_code == 200 and r.headers["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Credentials" not in r.headers
    # Without Origin or with an unknown method: 400 BadRequest.
    r = requests.options(f"{server.endpoint}/{bucket}/k",
                         headers={"Access-Control-Request-Method": "GET"}, timeout=30)
    assert (r.status_code, xml_code(r.content)) == (400, "BadRequest")
    r = preflight(server, bucket, "k", "http://a.example.com", "PATCH")
    assert (r.status_code, xml_code(r.content)) == (400, "BadRequest")
    r = preflight(server, "no-such-bucket-cors", "k", "http://a.example.com", "GET")
    assert (r.status_code, xml_code(r.content)) == (404, "NoSuchBucket")
    # A preflight to a presigned URL: its signature is for the GET it names, not OPTIONS,
    # and is not checked; the rules answer, as for any other preflight.
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"})
    r = requests.options(url, timeout=30)
    assert (r.status_code, xml_code(r.content)) == (400, "BadRequest"), r.text
    r = requests.options(url, headers={"Origin": "http://a.example.com",
                                       "Access-Control-Request-Method": "GET"}, timeout=30)
    assert r.status_code == 200, r.text
    assert r.headers["Access-Control-Allow-Origin"] == "http://a.example.com"


def test_allowed_requests_carry_the_headers(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"v")
    s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=rules(
        {"AllowedOrigins": ["http://app.example.com"], "AllowedMethods": ["GET", "HEAD"],
         "ExposeHeaders": ["ETag", "x-amz-request-id"]}))
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"})
    r = requests.get(url, headers={"Origin": "http://app.example.com"}, timeout=30)
    assert r.status_code == 200 and r.content == b"v"
    assert r.headers["Access-Control-Allow-Origin"] == "http://app.example.com"
    assert r.headers["Access-Control-Expose-Headers"] == "ETag, x-amz-request-id"
    # An error the browser may read: the anonymous GET is refused, with the headers.
    r = requests.get(f"{server.endpoint}/{bucket}/k", headers={"Origin": "http://app.example.com"},
                     timeout=30)
    assert (r.status_code, xml_code(r.content)) == (403, "AccessDenied")
    assert r.headers["Access-Control-Allow-Origin"] == "http://app.example.com"
    # Another origin, or no Origin at all: no CORS headers.
    for headers in ({"Origin": "http://evil.example.com"}, {}):
        r = requests.get(url, headers=headers, timeout=30)
        assert r.status_code == 200
        assert "Access-Control-Allow-Origin" not in r.headers


class _Page(http.server.BaseHTTPRequestHandler):
    page = b""

    def do_GET(self):  # noqa: N802 (http.server's name)
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(self.page)))
        self.end_headers()
        self.wfile.write(self.page)

    def log_message(self, *args):
        pass


def run_browser(page: bytes) -> str:
    """Serves `page` on another loopback port (another origin) and returns what its script
    wrote into <pre id=out>, once headless Chromium ran it."""
    chromium = require_tool("chromium", package="chromium")
    _Page.page = page
    port = free_port()
    httpd = http.server.ThreadingHTTPServer((PAGE_ORIGIN_HOST, port), _Page)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        r = subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-dev-shm-usage", "--virtual-time-budget=15000", "--dump-dom",
             f"http://{PAGE_ORIGIN_HOST}:{port}/page.html"],
            capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr[-3000:]
        m = re.search(r'<pre id="out">(.*?)</pre>', r.stdout, re.S)
        assert m, r.stdout
        return m.group(1)
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_browser_on_another_origin(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="public/hello.txt", Body=b"hello from strata")
    s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Statement": [
        {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
         "Resource": f"arn:aws:s3:::{bucket}/public/*"},
        {"Effect": "Allow", "Principal": "*", "Action": "s3:PutObject",
         "Resource": f"arn:aws:s3:::{bucket}/uploads/*"}]}))
    target = f"{server.endpoint}/{bucket}"
    script = f"""
      async function run() {{
        const out = [];
        try {{
          const r = await fetch("{target}/public/hello.txt");
          out.push("GET " + r.status + " " + (await r.text()));
        }} catch (e) {{ out.push("GET failed " + e); }}
        try {{
          const r = await fetch("{target}/uploads/from-browser.txt", {{
            method: "PUT", body: "written by chromium",
            headers: {{"x-amz-meta-src": "chromium", "content-type": "text/plain"}}}});
          out.push("PUT " + r.status);
        }} catch (e) {{ out.push("PUT failed " + e); }}
        document.getElementById("out").textContent = out.join(" | ");
      }}
      run();"""
    page = f"<html><body><pre id=out>pending</pre><script>{script}</script></body></html>"

    # No CORS rules: the browser refuses the script both answers.
    out = run_browser(page.encode())
    assert out.startswith("GET failed") and "PUT failed" in out, out
    with raises_s3("404", 404):  # a HEAD's error has no body
        s3.head_object(Bucket=bucket, Key="uploads/from-browser.txt")

    s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=rules(
        {"AllowedOrigins": [f"http://{PAGE_ORIGIN_HOST}:*"], "AllowedMethods": ["GET", "PUT"],
         "AllowedHeaders": ["content-type", "x-amz-meta-*"], "MaxAgeSeconds": 60}))
    out = run_browser(page.encode())
    assert out == "GET 200 hello from strata | PUT 200", out
    head = s3.head_object(Bucket=bucket, Key="uploads/from-browser.txt")
    assert head["Metadata"] == {"src": "chromium"}
    body = s3.get_object(Bucket=bucket, Key="uploads/from-browser.txt")["Body"].read()
    assert body == b"written by chromium"
