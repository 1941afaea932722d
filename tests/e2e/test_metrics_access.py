"""Who reads which metrics (issue 17, item 6).

The usage series are labelled by bucket, and one page showed every user's bucket names
to anyone who could reach the port. Now:
  - no credentials: the aggregate series only (server.metrics_public, default true), or
    403 AccessDenied (metrics_public = false);
  - `Authorization: Bearer <server.metrics_token>`, what Prometheus sends: every series;
    a wrong token: 403;
  - GET /_strata/metrics signed by an admin user: every series; another user: 403.
A signed request to /metrics is still S3 on the bucket "metrics" (test_metrics.py).
"""
import requests

import s3sign
from conftest import (ADMIN_AK, ADMIN_SK, OTHER_AK, OTHER_SK, admin_scrape, make_client,
                      metric, unique_bucket, xml_code)
from test_metrics import CONTENT_TYPE, Exposition

TOKEN = "e2e-scrape-token-0123456789abcdef"


def with_bucket(srv):
    """A bucket holding one object on srv, so the usage series name it."""
    s3 = make_client(srv)
    b = unique_bucket("private-name")
    s3.create_bucket(Bucket=b)
    s3.put_object(Bucket=b, Key="k", Body=b"x" * 1234)
    return b


def get(srv, path, **headers):
    return requests.get(srv.endpoint + path, headers=headers, timeout=30)


def assert_exposition(resp):
    assert resp.status_code == 200, resp.text
    assert resp.headers["Content-Type"] == CONTENT_TYPE
    return Exposition(resp.text)


def assert_denied(resp, code="AccessDenied"):
    assert resp.status_code == 403, (resp.status_code, resp.text)
    assert resp.headers["Content-Type"] == "application/xml", resp.headers
    assert xml_code(resp.content) == code, resp.text
    assert "strata_" not in resp.text


def signed_scrape(srv, access_key, secret_key, path="/_strata/metrics"):
    signer = s3sign.SigV4(access_key, secret_key, srv.region)
    headers = {"host": srv.netloc, "x-amz-date": s3sign.amz_now(),
               "x-amz-content-sha256": s3sign.EMPTY_SHA256}
    headers["authorization"] = signer.authorization("GET", path, [], headers,
                                                    s3sign.EMPTY_SHA256)
    return requests.get(srv.endpoint + path, headers=headers, timeout=30)


def test_unauthenticated_page_names_no_bucket(server):
    b = with_bucket(server)
    for path in ("/metrics", "/_strata/metrics"):
        exp = assert_exposition(get(server, path))
        assert b not in exp.text
        assert 'bucket="' not in exp.text
        assert not exp.series("strata_usage_bytes") and not exp.series("strata_usage_objects")
        # Aggregates stay: requests, tiers, the process.
        assert exp.series("strata_tier_bytes"), exp.text
        assert exp.series("strata_requests_total"), exp.text
    # The admin sees the bucket's series.
    full = assert_exposition(admin_scrape(server))
    assert full.get("strata_usage_bytes", bucket=b, tier="hot") == 1234
    assert metric(server, "strata_usage_objects", bucket=b, tier="hot") == 1


def test_only_admins_read_every_series_by_signature(server):
    b = with_bucket(server)
    assert b in assert_exposition(signed_scrape(server, ADMIN_AK, ADMIN_SK)).text
    assert_denied(signed_scrape(server, OTHER_AK, OTHER_SK))
    assert_denied(signed_scrape(server, ADMIN_AK, ADMIN_SK + "x"), "SignatureDoesNotMatch")
    assert_denied(signed_scrape(server, "NOSUCHKEY", "whatever"), "InvalidAccessKeyId")
    # A bearer token on a server that has none configured reads nothing.
    assert_denied(get(server, "/metrics", Authorization=f"Bearer {TOKEN}"))


def test_bearer_token_reads_every_series(strata_factory):
    srv = strata_factory(overrides={"server": {"metrics_token": TOKEN}})
    b = with_bucket(srv)
    for path in ("/metrics", "/_strata/metrics"):
        exp = assert_exposition(get(srv, path, Authorization=f"Bearer {TOKEN}"))
        assert exp.get("strata_usage_bytes", bucket=b, tier="hot") == 1234
        for wrong in (TOKEN + "x", TOKEN[:-1], "x" * len(TOKEN)):
            assert_denied(get(srv, path, Authorization=f"Bearer {wrong}"))
        # Unauthenticated: still the aggregate page.
        assert b not in assert_exposition(get(srv, path)).text


def test_metrics_public_false_refuses_unauthenticated_scrapes(strata_factory):
    srv = strata_factory(overrides={"server": {"metrics_public": False,
                                               "metrics_token": TOKEN}})
    b = with_bucket(srv)
    for path in ("/metrics", "/_strata/metrics"):
        assert_denied(get(srv, path))
        assert b in assert_exposition(get(srv, path, Authorization=f"Bearer {TOKEN}")).text
    assert b in assert_exposition(admin_scrape(srv)).text
    assert_denied(signed_scrape(srv, OTHER_AK, OTHER_SK))
    # S3 itself is unaffected.
    assert make_client(srv).list_objects_v2(Bucket=b)["KeyCount"] == 1
