"""s3cmd (Debian's) against strata with s3cmd's default region settings.

s3cmd's default bucket_location is "US": it signs its first request for the region "US",
reads the region S3 expects from the <Region> of the AuthorizationHeaderMalformed error
(S3 sends one, and so does strata) and signs again. Without <Region>, every s3cmd
command failed. Nothing here overrides the region. scripts/deps.sh --test installs s3cmd;
a missing one skips locally and fails with CI=true (require.py).
"""
import hashlib
import os
import subprocess

import pytest
import requests
from xml.etree import ElementTree

from conftest import unique_bucket, xml_code

import require
import s3sign


def s3cmd_path():
    return require.require_tool("s3cmd", package="s3cmd")


def s3cmd_config(srv, directory):
    """A config with only what locates the gateway and the keys: no bucket_location, no
    signature version, so s3cmd's defaults (region US, SigV4) apply."""
    cfg = directory / "s3cfg"
    cfg.write_text("[default]\n"
                   f"access_key = {srv.access_key}\n"
                   f"secret_key = {srv.secret_key}\n"
                   f"host_base = {srv.netloc}\n"
                   f"host_bucket = {srv.netloc}\n"
                   "use_https = False\n")
    return cfg


def s3cmd(cfg, *args, timeout=300):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["HOME"] = str(cfg.parent)
    res = subprocess.run([s3cmd_path(), "-c", str(cfg), *map(str, args)], env=env,
                         capture_output=True, text=True, timeout=timeout,
                         stdin=subprocess.DEVNULL)
    assert res.returncode == 0, (f"s3cmd {' '.join(map(str, args))} exited {res.returncode}\n"
                                 f"stdout:\n{res.stdout}\nstderr:\n{res.stderr}")
    return res.stdout


def test_s3cmd_default_region_mb_put_ls_get_del_rb(server, tmp_path):
    cfg = s3cmd_config(server, tmp_path)
    b = unique_bucket("s3cmd")
    small = tmp_path / "small.txt"
    small.write_bytes(b"hello from s3cmd\n")
    # Above s3cmd's 15 MiB multipart chunk: two parts.
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(17 << 20))

    s3cmd(cfg, "mb", f"s3://{b}")
    assert f"s3://{b}" in s3cmd(cfg, "ls")
    s3cmd(cfg, "put", small, f"s3://{b}/dir/small.txt")
    s3cmd(cfg, "put", big, f"s3://{b}/big.bin")
    listing = s3cmd(cfg, "ls", f"s3://{b}/dir/")
    assert f"s3://{b}/dir/small.txt" in listing, listing
    recursive = s3cmd(cfg, "ls", "--recursive", f"s3://{b}")
    assert f"s3://{b}/big.bin" in recursive and str(17 << 20) in recursive, recursive

    out_small, out_big = tmp_path / "small.out", tmp_path / "big.out"
    s3cmd(cfg, "get", f"s3://{b}/dir/small.txt", out_small)
    s3cmd(cfg, "get", f"s3://{b}/big.bin", out_big)
    assert out_small.read_bytes() == small.read_bytes()
    assert hashlib.sha256(out_big.read_bytes()).digest() == hashlib.sha256(big.read_bytes()).digest()

    s3cmd(cfg, "del", f"s3://{b}/dir/small.txt")
    s3cmd(cfg, "del", f"s3://{b}/big.bin")
    assert s3cmd(cfg, "ls", f"s3://{b}").strip() == ""
    s3cmd(cfg, "rb", f"s3://{b}")
    assert f"s3://{b}" not in s3cmd(cfg, "ls")


def test_wrong_region_error_names_the_region(server):
    """What s3cmd reads: AuthorizationHeaderMalformed with <Region>, as S3 sends it."""
    signer = s3sign.SigV4(server.access_key, server.secret_key, region="US")
    headers = {"host": server.netloc, "x-amz-date": s3sign.amz_now(),
               "x-amz-content-sha256": s3sign.EMPTY_SHA256}
    headers["authorization"] = signer.authorization("GET", "/", [], headers, s3sign.EMPTY_SHA256)
    r = requests.get(server.endpoint + "/", headers=headers, timeout=30)
    assert (r.status_code, xml_code(r.content)) == (400, "AuthorizationHeaderMalformed"), r.text
    assert f"<Region>{server.region}</Region>" in r.text, r.text
    message = ElementTree.fromstring(r.content).findtext("Message")
    assert f"the region 'US' is wrong; expecting '{server.region}'" in message, r.text
