"""Virtual-hosted-style requests (bucket.<domain>) when the config sets server.domain.

Names under the test domain resolve to loopback inside this test process only: the
resolver is wrapped, nothing outside the process changes."""
import socket

import boto3
import botocore.config
import pytest

from conftest import raises_s3, unique_bucket

DOMAIN = "s3.strata.test"


@pytest.fixture
def loopback_domain(monkeypatch):
    real = socket.getaddrinfo

    def resolve(host, *args, **kwargs):
        if isinstance(host, str) and (host == DOMAIN or host.endswith("." + DOMAIN)):
            host = "127.0.0.1"
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)


def virtual_client(srv, signature_version="s3v4"):
    cfg = botocore.config.Config(signature_version=signature_version,
                                 s3={"addressing_style": "virtual"},
                                 retries={"max_attempts": 1, "mode": "standard"})
    return boto3.session.Session().client(
        "s3", endpoint_url=f"http://{DOMAIN}:{srv.port}", aws_access_key_id=srv.access_key,
        aws_secret_access_key=srv.secret_key, region_name=srv.region, config=cfg)


@pytest.mark.boto3
@pytest.mark.parametrize("signature_version", [
    "s3v4",
    # botocore before 1.36 signs a virtual-hosted ListObjectsV2 with SigV2 over
    # "/bucket?list-type=2" instead of S3's "/bucket/", which S3 itself refuses.
    pytest.param("s3", marks=pytest.mark.needs_new_boto3),
])
def test_virtual_hosted_bucket_and_objects(strata_factory, loopback_domain, signature_version):
    srv = strata_factory({"server": {"domain": DOMAIN}})
    s3 = virtual_client(srv, signature_version)
    name = unique_bucket("vhost")
    s3.create_bucket(Bucket=name)
    s3.head_bucket(Bucket=name)
    s3.put_object(Bucket=name, Key="dir/a key+plus", Body=b"virtual")
    assert s3.get_object(Bucket=name, Key="dir/a key+plus")["Body"].read() == b"virtual"
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=name)["Contents"]]
    assert keys == ["dir/a key+plus"]
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket=name, Key="missing")
    # Path-style requests keep working on the same server.
    path_style = boto3.session.Session().client(
        "s3", endpoint_url=f"http://127.0.0.1:{srv.port}", aws_access_key_id=srv.access_key,
        aws_secret_access_key=srv.secret_key, region_name=srv.region,
        config=botocore.config.Config(s3={"addressing_style": "path"}))
    assert path_style.get_object(Bucket=name, Key="dir/a key+plus")["Body"].read() == b"virtual"
    s3.delete_object(Bucket=name, Key="dir/a key+plus")
    s3.delete_bucket(Bucket=name)
    with raises_s3("404", 404):
        path_style.head_bucket(Bucket=name)
