"""Integrity on the local tier: every data file carries the CRC64NVME of each 64 KiB chunk,
a read verifies the chunks it touches, and damaged bytes are never served as a success
(the server logs the data file instead). Orphaned data files are swept at start."""
import os

import pytest
from botocore.exceptions import ClientError

from conftest import make_client

CHUNK = 64 << 10  # the chunk size new data files are written with
FOOTER = 40


def data_files(srv):
    """Paths of every data file of the server's local tiers: <data_dir>/<tier>/data/<xx>/<id>."""
    out = set()
    base = srv.workdir / "data"
    for root, _, names in os.walk(base):
        if os.path.relpath(root, base).split(os.sep)[1:2] != ["data"]:
            continue
        out.update(os.path.join(root, name) for name in names)
    return out


def flip_byte(path, offset):
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0xFF]))


def read_or_none(s3, **kwargs):
    """The body of a GET, or None when the request or the body stream failed."""
    try:
        return s3.get_object(**kwargs)["Body"].read()
    except Exception:  # noqa: BLE001 - a cut connection surfaces as several types
        return None


@pytest.mark.boto3
def test_damaged_chunk_is_never_served_and_is_logged(strata_factory):
    srv = strata_factory()
    s3 = make_client(srv, retries={"total_max_attempts": 1})
    s3.create_bucket(Bucket="integrity")
    body = os.urandom(3 * CHUNK + 1000)
    before = data_files(srv)
    s3.put_object(Bucket="integrity", Key="obj", Body=body)
    new = data_files(srv) - before
    assert len(new) == 1, new
    path = new.pop()
    chunks = 4
    assert os.path.getsize(path) == len(body) + 8 * chunks + FOOTER
    assert s3.get_object(Bucket="integrity", Key="obj")["Body"].read() == body

    flip_byte(path, CHUNK + 12345)  # in chunk 1

    # The whole object: an error or a cut connection, never the damaged bytes.
    got = read_or_none(s3, Bucket="integrity", Key="obj")
    assert got is None, f"a GET returned {len(got)} bytes of a damaged object as a success"
    # A range inside the damaged chunk fails as well.
    assert read_or_none(s3, Bucket="integrity", Key="obj",
                        Range=f"bytes={CHUNK + 100}-{CHUNK + 200}") is None
    # Ranges in undamaged chunks still read.
    for first, last in ((0, CHUNK - 1), (2 * CHUNK, len(body) - 1), (2 * CHUNK + 5, 3 * CHUNK + 10)):
        got = s3.get_object(Bucket="integrity", Key="obj",
                            Range=f"bytes={first}-{last}")["Body"].read()
        assert got == body[first:last + 1], (first, last)
    # A range that only starts in a good chunk fails when it reaches the damaged one.
    assert read_or_none(s3, Bucket="integrity", Key="obj",
                        Range=f"bytes={CHUNK - 10}-{CHUNK + 10}") is None

    srv.stop()  # flushes the log
    lines = [ln for ln in srv.logs().splitlines() if "CRC64NVME mismatch" in ln]
    assert lines, srv.logs()
    assert all(path in ln and "chunk 1" in ln for ln in lines), lines


@pytest.mark.boto3
def test_damage_in_the_first_block_is_an_error_response(strata_factory):
    """The first block is read before the response header is sent (they go out in one
    write), so damage there is answered with an S3 error, not a cut connection."""
    srv = strata_factory()
    s3 = make_client(srv, retries={"total_max_attempts": 1})
    s3.create_bucket(Bucket="integrity")
    body = os.urandom(5000)
    before = data_files(srv)
    s3.put_object(Bucket="integrity", Key="small", Body=body)
    (path,) = data_files(srv) - before
    assert s3.get_object(Bucket="integrity", Key="small")["Body"].read() == body
    flip_byte(path, 4000)
    with pytest.raises(ClientError) as err:
        s3.get_object(Bucket="integrity", Key="small")
    assert err.value.response["ResponseMetadata"]["HTTPStatusCode"] == 500
    assert err.value.response["Error"]["Code"] == "InternalError"
    # The connection is still good for the next request.
    s3.put_object(Bucket="integrity", Key="other", Body=b"fine")
    assert s3.get_object(Bucket="integrity", Key="other")["Body"].read() == b"fine"


@pytest.mark.boto3
def test_orphan_data_files_are_swept_at_start(strata_factory):
    srv = strata_factory()
    s3 = make_client(srv)
    s3.create_bucket(Bucket="sweep")
    s3.put_object(Bucket="sweep", Key="kept", Body=b"kept bytes")
    kept = data_files(srv)
    assert len(kept) == 1
    # What a crash between promoting a file and committing its record leaves behind.
    some = next(iter(kept))
    orphan = os.path.join(os.path.dirname(os.path.dirname(some)), "ab",
                          "ab" + "0" * 30)
    os.makedirs(os.path.dirname(orphan), exist_ok=True)
    with open(orphan, "wb") as f:
        f.write(b"orphaned bytes")
    srv.restart()
    assert data_files(srv) == kept
    assert make_client(srv).get_object(Bucket="sweep", Key="kept")["Body"].read() == b"kept bytes"
    srv.stop()
    assert "orphan sweep removed 1 unreferenced data files" in srv.logs(), srv.logs()
