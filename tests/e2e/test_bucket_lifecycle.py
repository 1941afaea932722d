"""Bucket lifecycle: Put/Get/DeleteBucketLifecycleConfiguration (?lifecycle) and the worker
that applies the rules.

  - The API (shared server, boto3): a configuration reads back as it was put (Filter by
    Prefix, by Tag, by And of prefix, tags and object sizes, the rule-level Prefix;
    Expiration by Days, by Date at midnight UTC, ExpiredObjectDeleteMarker;
    NoncurrentVersionExpiration with NewerNoncurrentVersions;
    AbortIncompleteMultipartUpload; Status Disabled); a rule without an ID gets one; a put
    replaces the whole configuration; no configuration is 404
    NoSuchLifecycleConfiguration; DELETE answers 204; a missing bucket is NoSuchBucket; only
    the owner may touch it.
  - Refused documents, sent raw so no client-side validation interferes: MalformedXML for
    a document off the schema, InvalidArgument for values S3 refuses (and for transitions
    to a cold class when the bucket is bound to no upstream: the shared server has none),
    InvalidRequest for a rule without an action; the configuration in place is left
    unchanged. Transitions to the local warm tier (STANDARD_IA, WARM) are accepted.
  - The warm tier: PutObject and CopyObject with a storage class of the warm tier put the
    bytes there (files under the warm tier's directory, none left on hot); a rule moves
    objects hot -> warm -> cold (HEAD's class, the files on each tier, the upstream).
  - The worker, on servers whose lifecycle "day" is one second ([lifecycle] day = "1s",
    interval = "1s"): expiration by prefix, by tags and size, by a past Date; noncurrent
    versions and then the lone delete marker go in a versioned bucket; stale multipart
    uploads are aborted; rules put on a bucket that already holds objects apply to them
    (the reseed); Disabled and deleted rules do nothing.
  - Transitions to the upstream (marker `upstream`, moto behind upstream.py's proxy): only
    classes of the tier the bucket is bound to are accepted (GLACIER and COLD, and the
    local STANDARD_IA/WARM); an object moves to GLACIER once written back, its local copy is
    dropped (a GET with the upstream cut fails) and a GET reads it through byte-exact;
    while the upstream is unreachable nothing is written back and nothing moves, and the
    object stays STANDARD and readable until the upstream returns.

Timing: every wait polls with a generous timeout (an Asan build on two shared cores); the
checks that something does *not* happen poll for a few lifecycle days after a witness
shows the worker has run past the time it would have happened.
"""
import base64
import datetime
import hashlib
import os
import time

import botocore.exceptions
import pytest

import s3sign
from conftest import (ADMIN_AK, ADMIN_SK, http_status, make_client, raises_s3, raw_exchange,
                      unique_bucket)
from upstream import cold_config, wait_until

KiB = 1 << 10
S3_NS = "http://s3.amazonaws.com/doc/2006-03-01/"
UTC = datetime.timezone.utc

WORKER_TIMEOUT = 30.0   # a due time of a few one-second days plus a few passes, with slack
HOLD = 4.0              # how long "nothing happens" is watched after a witness moved
COLD_TIMEOUT = 60.0     # write-back delay, a due time and a pass, on a loaded machine
DRAIN_TIMEOUT = 120.0   # after an outage: the write-back worker's retry backoff decides


# ---------------------------------------------------------------------------------------
# Helpers


def fast_lifecycle():
    """[lifecycle] overrides: a lifecycle day of one second, a pass every second."""
    return {"lifecycle": {"day": "1s", "interval": "1s"}}


def cold_lifecycle(upstream, delay="1s"):
    """strata_factory overrides: upstream.py's cold tier plus the one-second lifecycle."""
    overrides = cold_config(upstream, delay)
    overrides.update(fast_lifecycle())
    return overrides


def put_rules(s3, bucket, rules):
    return s3.put_bucket_lifecycle_configuration(Bucket=bucket,
                                                 LifecycleConfiguration={"Rules": rules})


def rules_of(s3, bucket):
    return s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]


def no_configuration(s3, bucket):
    with raises_s3("NoSuchLifecycleConfiguration", 404):
        s3.get_bucket_lifecycle_configuration(Bucket=bucket)


def exists(s3, bucket, key):
    try:
        s3.head_object(Bucket=bucket, Key=key)
        return True
    except botocore.exceptions.ClientError as e:
        if http_status(e) == 404:
            return False
        raise


def versions_of(s3, bucket, key):
    """([version ids], [delete marker ids]) of exactly `key`, newest first."""
    page = s3.list_object_versions(Bucket=bucket, Prefix=key)
    return ([v["VersionId"] for v in page.get("Versions", []) if v["Key"] == key],
            [m["VersionId"] for m in page.get("DeleteMarkers", []) if m["Key"] == key])


def storage_class(s3, bucket, key):
    """The StorageClass HEAD reports (no x-amz-storage-class header: STANDARD)."""
    return s3.head_object(Bucket=bucket, Key=key).get("StorageClass", "STANDARD")


def not_served(client, bucket, key):
    """True when a GET fails: an error status (5xx), or a body cut short (the headers of a
    read-through go out before the upstream is asked for the bytes)."""
    try:
        client.get_object(Bucket=bucket, Key=key)["Body"].read()
    except botocore.exceptions.ClientError as e:
        assert http_status(e) >= 500, e.response
        return True
    except Exception:  # noqa: BLE001 - IncompleteRead, ResponseStreamingError, a reset
        return True
    return False


def whole_get(s3, bucket, key, body):
    """get_object's response when it returns exactly `body`, else None (errors too)."""
    try:
        got = s3.get_object(Bucket=bucket, Key=key)
        data = got["Body"].read()
    except Exception:  # noqa: BLE001 - polled until the upstream answers again
        return None
    return got if data == body else None


def wait_gone(s3, bucket, key, srv, timeout=WORKER_TIMEOUT):
    wait_until(lambda: not exists(s3, bucket, key), timeout,
               f"{bucket}/{key} to expire", interval=0.2, srv=srv)


def holds(predicate, seconds, what, srv=None, interval=0.2):
    """Polls predicate() for `seconds`; fails as soon as it is false."""
    deadline = time.monotonic() + seconds
    while True:
        if not predicate():
            logs = f"\n--- strata logs (tail)\n{srv.logs()[-6000:]}" if srv is not None else ""
            pytest.fail(f"{what} stopped holding{logs}")
        if time.monotonic() > deadline:
            return
        time.sleep(interval)


def lifecycle_doc(*rules):
    return (f'<LifecycleConfiguration xmlns="{S3_NS}">' + "".join(rules) +
            "</LifecycleConfiguration>").encode()


PREFIX_FILTER = "<Filter><Prefix>p/</Prefix></Filter>"
TAG_FILTER = "<Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter>"
EXPIRE_1 = "<Expiration><Days>1</Days></Expiration>"


def rule_xml(actions=EXPIRE_1, rule_id="r1", status="Enabled", scope=PREFIX_FILTER):
    out = "<Rule>"
    if rule_id is not None:
        out += f"<ID>{rule_id}</ID>"
    out += scope
    if status is not None:
        out += f"<Status>{status}</Status>"
    return out + actions + "</Rule>"


def transition(storage, days=1):
    return (f"<Transition><Days>{days}</Days><StorageClass>{storage}</StorageClass>"
            "</Transition>")


def put_raw(srv, bucket, body, md5_of=None):
    """PUT /bucket?lifecycle with exactly `body` (signed, with Content-MD5 of `md5_of`,
    by default of the body)."""
    signer = s3sign.SigV4(ADMIN_AK, ADMIN_SK, srv.region)
    md5 = base64.b64encode(hashlib.md5(body if md5_of is None else md5_of).digest()).decode()
    req = s3sign.signed_request_bytes(signer, "PUT", srv.netloc, f"/{bucket}",
                                      query=[("lifecycle", "")], body=body,
                                      extra_headers={"Content-MD5": md5})
    resp = raw_exchange(srv, req)
    assert resp is not None, "no answer to PUT ?lifecycle"
    return resp


# ---------------------------------------------------------------------------------------
# The API


EVERY_FORM = [
    {"ID": "by-prefix", "Filter": {"Prefix": "logs/"}, "Status": "Enabled",
     "Expiration": {"Days": 30}},
    {"ID": "by-tag", "Filter": {"Tag": {"Key": "class", "Value": "scratch"}},
     "Status": "Enabled",
     "Expiration": {"Date": datetime.datetime(2031, 1, 1, tzinfo=UTC)}},
    {"ID": "by-and",
     "Filter": {"And": {"Prefix": "data/",
                        "Tags": [{"Key": "a", "Value": "1"}, {"Key": "b", "Value": "2"}],
                        "ObjectSizeGreaterThan": 1024,
                        "ObjectSizeLessThan": 10 * 1024 * 1024}},
     "Status": "Enabled",
     "NoncurrentVersionExpiration": {"NoncurrentDays": 10, "NewerNoncurrentVersions": 3}},
    {"ID": "markers", "Filter": {"Prefix": ""}, "Status": "Enabled",
     "Expiration": {"ExpiredObjectDeleteMarker": True},
     "NoncurrentVersionExpiration": {"NoncurrentDays": 1}},
    {"ID": "uploads", "Filter": {"Prefix": "incoming/"}, "Status": "Enabled",
     "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 7}},
    {"ID": "paused", "Filter": {"Prefix": "keep/"}, "Status": "Disabled",
     "Expiration": {"Days": 1}},
    {"ID": "legacy", "Prefix": "old/", "Status": "Enabled", "Expiration": {"Days": 365}},
]


def test_configuration_reads_back_as_put(s3, bucket):
    resp = put_rules(s3, bucket, EVERY_FORM)
    assert resp["ResponseMetadata"]["HTTPStatusCode"] == 200
    got = rules_of(s3, bucket)
    assert got == EVERY_FORM
    date = got[1]["Expiration"]["Date"]
    assert (date.hour, date.minute, date.second, date.utcoffset()) == (0, 0, 0,
                                                                       datetime.timedelta(0))


def test_no_configuration_and_delete(s3, bucket):
    no_configuration(s3, bucket)
    resp = s3.delete_bucket_lifecycle(Bucket=bucket)   # nothing to delete: still 204
    assert resp["ResponseMetadata"]["HTTPStatusCode"] == 204
    no_configuration(s3, bucket)

    put_rules(s3, bucket, EVERY_FORM[:1])
    assert rules_of(s3, bucket) == EVERY_FORM[:1]
    resp = s3.delete_bucket_lifecycle(Bucket=bucket)
    assert resp["ResponseMetadata"]["HTTPStatusCode"] == 204
    no_configuration(s3, bucket)
    # The bucket itself is untouched.
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"x"


def test_rule_without_id_gets_one(s3, bucket):
    rules = [{"Filter": {"Prefix": "a/"}, "Status": "Enabled", "Expiration": {"Days": 1}},
             {"Filter": {"Prefix": "b/"}, "Status": "Enabled", "Expiration": {"Days": 2}}]
    put_rules(s3, bucket, rules)
    got = rules_of(s3, bucket)
    ids = [r.pop("ID", None) for r in got]
    assert all(isinstance(i, str) and 0 < len(i) <= 255 for i in ids), ids
    assert ids[0] != ids[1], ids
    assert got == rules
    # Kept, not made anew on every read.
    assert [r["ID"] for r in rules_of(s3, bucket)] == ids


def test_put_replaces_the_whole_configuration(s3, bucket):
    put_rules(s3, bucket, EVERY_FORM)
    second = [{"ID": "only", "Filter": {"Prefix": "tmp/"}, "Status": "Enabled",
               "Expiration": {"Days": 3}}]
    put_rules(s3, bucket, second)
    assert rules_of(s3, bucket) == second


def test_missing_bucket(s3):
    name = unique_bucket("nolc")
    with raises_s3("NoSuchBucket", 404):
        s3.get_bucket_lifecycle_configuration(Bucket=name)
    with raises_s3("NoSuchBucket", 404):
        put_rules(s3, name, EVERY_FORM[:1])
    with raises_s3("NoSuchBucket", 404):
        s3.delete_bucket_lifecycle(Bucket=name)
    with raises_s3("404", 404):   # the put did not create it (HEAD: no error body)
        s3.head_bucket(Bucket=name)


def test_lifecycle_is_owner_only(s3, s3_other, bucket):
    put_rules(s3, bucket, EVERY_FORM[:1])
    with raises_s3("AccessDenied", 403):
        s3_other.get_bucket_lifecycle_configuration(Bucket=bucket)
    with raises_s3("AccessDenied", 403):
        put_rules(s3_other, bucket, EVERY_FORM[1:2])
    with raises_s3("AccessDenied", 403):
        s3_other.delete_bucket_lifecycle(Bucket=bucket)
    assert rules_of(s3, bucket) == EVERY_FORM[:1]


MALFORMED, INVALID, REQUEST = "MalformedXML", "InvalidArgument", "InvalidRequest"

REFUSED = [
    ("not-xml", b"this is not xml", MALFORMED),
    ("truncated", f'<LifecycleConfiguration xmlns="{S3_NS}"><Rule><ID>a</ID>'.encode(),
     MALFORMED),
    ("wrong-root", f"<Lifecycle>{rule_xml()}</Lifecycle>".encode(), MALFORMED),
    ("no-rules", lifecycle_doc(), MALFORMED),
    ("no-status", lifecycle_doc(rule_xml(status=None)), MALFORMED),
    ("bad-status", lifecycle_doc(rule_xml(status="enabled")), MALFORMED),
    ("filter-and-prefix",
     lifecycle_doc(rule_xml(scope=PREFIX_FILTER + "<Prefix>p/</Prefix>")), MALFORMED),
    ("two-predicates-without-and",
     lifecycle_doc(rule_xml(scope="<Filter><Prefix>p/</Prefix><Tag><Key>k</Key>"
                                  "<Value>v</Value></Tag></Filter>")), MALFORMED),
    ("unknown-element", lifecycle_doc(rule_xml(EXPIRE_1 + "<Bogus>1</Bogus>")), MALFORMED),
    ("days-not-a-number",
     lifecycle_doc(rule_xml("<Expiration><Days>two</Days></Expiration>")), MALFORMED),
    ("unknown-storage-class", lifecycle_doc(rule_xml(transition("FROZEN"))), MALFORMED),
    ("expiration-days-0",
     lifecycle_doc(rule_xml("<Expiration><Days>0</Days></Expiration>")), INVALID),
    ("expiration-days-negative",
     lifecycle_doc(rule_xml("<Expiration><Days>-3</Days></Expiration>")), INVALID),
    ("date-not-midnight",
     lifecycle_doc(rule_xml("<Expiration><Date>2031-01-01T12:00:00Z</Date></Expiration>")),
     INVALID),
    ("noncurrent-days-0",
     lifecycle_doc(rule_xml("<NoncurrentVersionExpiration><NoncurrentDays>0</NoncurrentDays>"
                            "</NoncurrentVersionExpiration>")), INVALID),
    ("newer-noncurrent-versions-0",
     lifecycle_doc(rule_xml("<NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays>"
                            "<NewerNoncurrentVersions>0</NewerNoncurrentVersions>"
                            "</NoncurrentVersionExpiration>")), INVALID),
    ("duplicate-ids", lifecycle_doc(rule_xml(rule_id="same"), rule_xml(rule_id="same")),
     INVALID),
    ("id-too-long", lifecycle_doc(rule_xml(rule_id="x" * 256)), INVALID),
    ("duplicate-tag-keys",
     lifecycle_doc(rule_xml(scope="<Filter><And><Prefix>p/</Prefix>"
                                  "<Tag><Key>k</Key><Value>1</Value></Tag>"
                                  "<Tag><Key>k</Key><Value>2</Value></Tag></And></Filter>")),
     INVALID),
    ("no-action", lifecycle_doc(rule_xml("")), REQUEST),
    ("abort-with-tag-filter",
     lifecycle_doc(rule_xml("<AbortIncompleteMultipartUpload><DaysAfterInitiation>1"
                            "</DaysAfterInitiation></AbortIncompleteMultipartUpload>",
                            scope=TAG_FILTER)), REQUEST),
    # Transitions: the shared server has no upstream tier, so no class is a valid target.
    ("glacier-without-upstream", lifecycle_doc(rule_xml(transition("GLACIER"))), INVALID),
    ("cold-without-upstream", lifecycle_doc(rule_xml(transition("COLD"))), INVALID),
    ("standard-ia-before-30-days", lifecycle_doc(rule_xml(transition("STANDARD_IA", 10))),
     INVALID),
    ("transition-to-standard", lifecycle_doc(rule_xml(transition("STANDARD"))), INVALID),
]


@pytest.mark.parametrize("body,code", [(b, c) for _, b, c in REFUSED],
                         ids=[name for name, _, _ in REFUSED])
def test_refused_configuration_changes_nothing(server, s3, bucket, body, code):
    resp = put_raw(server, bucket, body)
    assert (resp.status, resp.code) == (400, code), resp
    no_configuration(s3, bucket)

    kept = EVERY_FORM[:2]
    put_rules(s3, bucket, kept)
    resp = put_raw(server, bucket, body)
    assert (resp.status, resp.code) == (400, code), resp
    assert rules_of(s3, bucket) == kept


def test_raw_document_and_content_md5(server, s3, bucket):
    body = lifecycle_doc(rule_xml(rule_id="raw", scope="<Prefix>old/</Prefix>"),
                         rule_xml(rule_id="raw-and",
                                  scope="<Filter><And><Prefix>p/</Prefix><Tag><Key>k</Key>"
                                        "<Value>v</Value></Tag></And></Filter>"))
    resp = put_raw(server, bucket, body, md5_of=b"something else")
    assert (resp.status, resp.code) == (400, "BadDigest"), resp
    no_configuration(s3, bucket)

    resp = put_raw(server, bucket, body)
    assert resp.status == 200, resp
    assert rules_of(s3, bucket) == [
        {"ID": "raw", "Prefix": "old/", "Status": "Enabled", "Expiration": {"Days": 1}},
        {"ID": "raw-and", "Filter": {"And": {"Prefix": "p/", "Tags": [{"Key": "k", "Value": "v"}]}},
         "Status": "Enabled", "Expiration": {"Days": 1}},
    ]


# ---------------------------------------------------------------------------------------
# The worker (one-second lifecycle days)


def test_expiration_by_prefix(strata_factory):
    srv = strata_factory(fast_lifecycle())
    s3 = make_client(srv)
    s3.create_bucket(Bucket="expire")
    put_rules(s3, "expire", [{"ID": "tmp", "Filter": {"Prefix": "tmp/"}, "Status": "Enabled",
                              "Expiration": {"Days": 2}}])
    s3.put_object(Bucket="expire", Key="tmp/a", Body=b"scratch")
    s3.put_object(Bucket="expire", Key="tmp/sub/b", Body=os.urandom(3 * KiB))
    s3.put_object(Bucket="expire", Key="keep/c", Body=b"kept")
    s3.put_object(Bucket="expire", Key="tmpfile", Body=b"not under tmp/")

    wait_gone(s3, "expire", "tmp/a", srv)
    wait_gone(s3, "expire", "tmp/sub/b", srv)
    holds(lambda: exists(s3, "expire", "keep/c") and exists(s3, "expire", "tmpfile"), HOLD,
          "the objects outside tmp/ being there", srv)
    listed = s3.list_objects_v2(Bucket="expire").get("Contents", [])
    assert sorted(o["Key"] for o in listed) == ["keep/c", "tmpfile"]
    assert s3.get_object(Bucket="expire", Key="keep/c")["Body"].read() == b"kept"
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket="expire", Key="tmp/a")
    # Acting on the rules leaves them in place.
    assert rules_of(s3, "expire")[0]["ID"] == "tmp"


def test_expiration_by_tags_and_size(strata_factory):
    srv = strata_factory(fast_lifecycle())
    s3 = make_client(srv)
    s3.create_bucket(Bucket="filtered")
    put_rules(s3, "filtered", [{
        "ID": "scratch",
        "Filter": {"And": {"Prefix": "f/", "Tags": [{"Key": "class", "Value": "scratch"}],
                           "ObjectSizeGreaterThan": 100}},
        "Status": "Enabled", "Expiration": {"Days": 1}}])
    big = os.urandom(200)
    s3.put_object(Bucket="filtered", Key="f/match", Body=big, Tagging="class=scratch&x=1")
    s3.put_object(Bucket="filtered", Key="f/small", Body=b"s" * 50, Tagging="class=scratch")
    s3.put_object(Bucket="filtered", Key="f/untagged", Body=big)
    s3.put_object(Bucket="filtered", Key="f/other-tag", Body=big, Tagging="class=gold")
    s3.put_object(Bucket="filtered", Key="g/match", Body=big, Tagging="class=scratch")

    wait_gone(s3, "filtered", "f/match", srv)
    kept = ["f/small", "f/untagged", "f/other-tag", "g/match"]
    holds(lambda: all(exists(s3, "filtered", k) for k in kept), HOLD,
          f"{kept} being there", srv)


def test_expiration_date_in_the_past(strata_factory):
    srv = strata_factory(fast_lifecycle())
    s3 = make_client(srv)
    s3.create_bucket(Bucket="dated")
    put_rules(s3, "dated", [{"ID": "past", "Filter": {"Prefix": "old/"}, "Status": "Enabled",
                             "Expiration": {"Date": datetime.datetime(2020, 1, 1, tzinfo=UTC)}},
                            {"ID": "future", "Filter": {"Prefix": "new/"}, "Status": "Enabled",
                             "Expiration": {"Date": datetime.datetime(2099, 1, 1,
                                                                      tzinfo=UTC)}}])
    s3.put_object(Bucket="dated", Key="old/k", Body=b"due at once")
    s3.put_object(Bucket="dated", Key="new/k", Body=b"due in 2099")
    wait_gone(s3, "dated", "old/k", srv)
    holds(lambda: exists(s3, "dated", "new/k"), HOLD, "new/k being there", srv)


def test_noncurrent_versions_then_the_lone_delete_marker(strata_factory):
    srv = strata_factory(fast_lifecycle())
    s3 = make_client(srv)
    b = "versioned"
    s3.create_bucket(Bucket=b)
    s3.put_bucket_versioning(Bucket=b, VersioningConfiguration={"Status": "Enabled"})
    put_rules(s3, b, [
        {"ID": "noncurrent", "Filter": {"Prefix": ""}, "Status": "Enabled",
         "NoncurrentVersionExpiration": {"NoncurrentDays": 1}},
        {"ID": "markers", "Filter": {"Prefix": ""}, "Status": "Enabled",
         "Expiration": {"ExpiredObjectDeleteMarker": True}},
    ])
    stay = s3.put_object(Bucket=b, Key="stay", Body=b"current, never expires")["VersionId"]
    v1 = s3.put_object(Bucket=b, Key="k", Body=b"one")["VersionId"]
    v2 = s3.put_object(Bucket=b, Key="k", Body=b"two")["VersionId"]
    assert v1 != v2

    # v1 is noncurrent since v2 was written: it goes a lifecycle day later.
    wait_until(lambda: versions_of(s3, b, "k") == ([v2], []), WORKER_TIMEOUT,
               lambda: f"only v2 left; now {versions_of(s3, b, 'k')}", interval=0.2, srv=srv)
    assert s3.get_object(Bucket=b, Key="k")["Body"].read() == b"two"
    with raises_s3("NoSuchVersion", 404):
        s3.get_object(Bucket=b, Key="k", VersionId=v1)

    # Deleting makes v2 noncurrent under a marker; v2 goes, and then the marker, alone.
    deleted = s3.delete_object(Bucket=b, Key="k")
    assert deleted.get("DeleteMarker") is True
    wait_until(lambda: versions_of(s3, b, "k") == ([], []), WORKER_TIMEOUT,
               lambda: f"no version of k; now {versions_of(s3, b, 'k')}", interval=0.2, srv=srv)
    with raises_s3("NoSuchKey", 404):
        s3.get_object(Bucket=b, Key="k")

    # A marker on a key that never had a version is alone from the start.
    assert s3.delete_object(Bucket=b, Key="ghost").get("DeleteMarker") is True
    wait_until(lambda: versions_of(s3, b, "ghost") == ([], []), WORKER_TIMEOUT,
               lambda: f"the ghost marker to go; now {versions_of(s3, b, 'ghost')}",
               interval=0.2, srv=srv)
    assert versions_of(s3, b, "stay") == ([stay], [])


def test_abort_incomplete_multipart_upload(strata_factory):
    srv = strata_factory(fast_lifecycle())
    s3 = make_client(srv)
    s3.create_bucket(Bucket="uploads")
    put_rules(s3, "uploads", [{"ID": "abort", "Filter": {"Prefix": "in/"}, "Status": "Enabled",
                               "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 1}}])
    stale = s3.create_multipart_upload(Bucket="uploads", Key="in/big.bin")["UploadId"]
    s3.upload_part(Bucket="uploads", Key="in/big.bin", UploadId=stale, PartNumber=1,
                   Body=os.urandom(64 * KiB))
    other = s3.create_multipart_upload(Bucket="uploads", Key="out/big.bin")["UploadId"]

    def open_uploads():
        return {u["UploadId"] for u in s3.list_multipart_uploads(Bucket="uploads")
                .get("Uploads", [])}

    assert open_uploads() == {stale, other}
    wait_until(lambda: stale not in open_uploads(), WORKER_TIMEOUT,
               lambda: f"the stale upload to be aborted; open: {open_uploads()}",
               interval=0.2, srv=srv)
    with raises_s3("NoSuchUpload", 404):
        s3.upload_part(Bucket="uploads", Key="in/big.bin", UploadId=stale, PartNumber=2,
                       Body=b"late")
    with raises_s3("NoSuchUpload", 404):
        s3.list_parts(Bucket="uploads", Key="in/big.bin", UploadId=stale)
    holds(lambda: other in open_uploads(), HOLD, "the upload outside in/ being open", srv)
    # The one outside the rule still completes.
    part = s3.upload_part(Bucket="uploads", Key="out/big.bin", UploadId=other, PartNumber=1,
                          Body=b"tail")
    s3.complete_multipart_upload(Bucket="uploads", Key="out/big.bin", UploadId=other,
                                 MultipartUpload={"Parts": [{"PartNumber": 1,
                                                             "ETag": part["ETag"]}]})
    assert s3.get_object(Bucket="uploads", Key="out/big.bin")["Body"].read() == b"tail"


def test_rules_apply_to_objects_already_there(strata_factory):
    srv = strata_factory(fast_lifecycle())
    s3 = make_client(srv)
    s3.create_bucket(Bucket="reseed")
    old = [f"old/{i}" for i in range(5)]
    for k in old:
        s3.put_object(Bucket="reseed", Key=k, Body=k.encode())
    s3.put_object(Bucket="reseed", Key="other/k", Body=b"outside the rule")
    s3.create_multipart_upload(Bucket="reseed", Key="old/upload")

    # No key was queued when these were written (the bucket had no rules): the worker
    # finds them by walking the bucket once the rules are set.
    put_rules(s3, "reseed", [{"ID": "old", "Filter": {"Prefix": "old/"}, "Status": "Enabled",
                              "Expiration": {"Days": 1},
                              "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 1}}])
    for k in old:
        wait_gone(s3, "reseed", k, srv)
    wait_until(lambda: not s3.list_multipart_uploads(Bucket="reseed").get("Uploads"),
               WORKER_TIMEOUT, "the upload begun before the rule to be aborted",
               interval=0.2, srv=srv)
    holds(lambda: exists(s3, "reseed", "other/k"), HOLD, "other/k being there", srv)


def test_disabled_rule_does_nothing(strata_factory):
    srv = strata_factory(fast_lifecycle())
    s3 = make_client(srv)
    s3.create_bucket(Bucket="paused")
    put_rules(s3, "paused", [
        {"ID": "off", "Filter": {"Prefix": "off/"}, "Status": "Disabled",
         "Expiration": {"Days": 1}},
        {"ID": "witness", "Filter": {"Prefix": "on/"}, "Status": "Enabled",
         "Expiration": {"Days": 1}},
    ])
    s3.put_object(Bucket="paused", Key="off/k", Body=b"stays")
    s3.put_object(Bucket="paused", Key="on/k", Body=b"goes")
    # The witness proves the worker ran past the time off/k would have been due.
    wait_gone(s3, "paused", "on/k", srv)
    holds(lambda: exists(s3, "paused", "off/k"), HOLD, "off/k being there", srv)
    assert rules_of(s3, "paused")[0]["Status"] == "Disabled"


def test_deleted_configuration_does_nothing(strata_factory):
    srv = strata_factory(fast_lifecycle())
    s3 = make_client(srv)
    for name in ("removed", "witness"):
        s3.create_bucket(Bucket=name)
        put_rules(s3, name, [{"ID": "all", "Filter": {"Prefix": ""}, "Status": "Enabled",
                              "Expiration": {"Days": 1}}])
    s3.put_object(Bucket="removed", Key="k", Body=b"queued, then its rule went away")
    s3.delete_bucket_lifecycle(Bucket="removed")
    s3.put_object(Bucket="witness", Key="k", Body=b"goes")
    wait_gone(s3, "witness", "k", srv)
    holds(lambda: exists(s3, "removed", "k"), HOLD, "removed/k being there", srv)
    no_configuration(s3, "removed")


# ---------------------------------------------------------------------------------------
# The warm tier (a second local tier: conf/strata.toml's "warm", STANDARD_IA and WARM)


def tier_files(srv, tier):
    """The data files of a local tier of srv (the object bytes it holds)."""
    data = srv.workdir / "data" / tier / "data"
    return sorted(p for p in data.rglob("*") if p.is_file()) if data.exists() else []


def test_storage_class_places_the_object_on_its_tier(strata_factory):
    srv = strata_factory()
    s3 = make_client(srv)
    s3.create_bucket(Bucket="placed")
    body = os.urandom(200 * KiB + 1)
    s3.put_object(Bucket="placed", Key="ia", Body=body, StorageClass="STANDARD_IA")
    assert storage_class(s3, "placed", "ia") == "STANDARD_IA"
    assert len(tier_files(srv, "warm")) == 1 and tier_files(srv, "hot") == []
    assert s3.get_object(Bucket="placed", Key="ia")["Body"].read() == body

    # CopyObject onto itself with a new class is how a user moves an object by hand.
    s3.copy_object(Bucket="placed", Key="ia", CopySource={"Bucket": "placed", "Key": "ia"},
                   StorageClass="STANDARD")
    assert storage_class(s3, "placed", "ia") == "STANDARD"
    assert len(tier_files(srv, "hot")) == 1 and tier_files(srv, "warm") == []
    s3.copy_object(Bucket="placed", Key="ia", CopySource={"Bucket": "placed", "Key": "ia"},
                   StorageClass="WARM")
    assert storage_class(s3, "placed", "ia") == "WARM"
    assert len(tier_files(srv, "warm")) == 1 and tier_files(srv, "hot") == []
    assert s3.get_object(Bucket="placed", Key="ia")["Body"].read() == body

    # A multipart upload with the class lands there too; a delete frees the warm file.
    mp = s3.create_multipart_upload(Bucket="placed", Key="mp", StorageClass="STANDARD_IA")
    part = s3.upload_part(Bucket="placed", Key="mp", UploadId=mp["UploadId"], PartNumber=1,
                          Body=body)
    s3.complete_multipart_upload(Bucket="placed", Key="mp", UploadId=mp["UploadId"],
                                 MultipartUpload={"Parts": [{"PartNumber": 1,
                                                             "ETag": part["ETag"]}]})
    assert storage_class(s3, "placed", "mp") == "STANDARD_IA"
    assert len(tier_files(srv, "warm")) == 2 and tier_files(srv, "hot") == []
    s3.delete_object(Bucket="placed", Key="ia")
    assert len(tier_files(srv, "warm")) == 1
    assert s3.get_object(Bucket="placed", Key="mp")["Body"].read() == body

    # Across a restart the warm copy is read from the warm tier (and not swept away).
    srv.stop()
    srv.start()
    s3 = make_client(srv)
    assert s3.get_object(Bucket="placed", Key="mp")["Body"].read() == body
    assert len(tier_files(srv, "warm")) == 1


def test_transition_to_warm(strata_factory):
    srv = strata_factory(fast_lifecycle())
    s3 = make_client(srv)
    s3.create_bucket(Bucket="aging")
    put_rules(s3, "aging", [{"ID": "warm", "Filter": {"Prefix": "old/"}, "Status": "Enabled",
                             "Transitions": [{"Days": 1, "StorageClass": "WARM"}]}])
    body = os.urandom(150 * KiB + 5)
    s3.put_object(Bucket="aging", Key="old/a", Body=body)
    s3.put_object(Bucket="aging", Key="new/b", Body=b"stays hot")
    wait_until(lambda: storage_class(s3, "aging", "old/a") == "WARM", WORKER_TIMEOUT,
               "old/a to move to WARM", interval=0.25, srv=srv)
    assert len(tier_files(srv, "warm")) == 1 and len(tier_files(srv, "hot")) == 1
    assert s3.get_object(Bucket="aging", Key="old/a")["Body"].read() == body
    assert storage_class(s3, "aging", "new/b") == "STANDARD"


# ---------------------------------------------------------------------------------------
# Transitions to the upstream


def glacier_rule(prefix="", days=1, storage="GLACIER"):
    return {"ID": f"to-{storage.lower()}", "Filter": {"Prefix": prefix}, "Status": "Enabled",
            "Transitions": [{"Days": days, "StorageClass": storage}]}


@pytest.mark.upstream
def test_transition_targets_on_a_bound_bucket(upstream, strata_factory):
    srv = strata_factory(cold_config(upstream, "60s"))   # the default (86400 s) day
    s3 = make_client(srv)
    s3.create_bucket(Bucket="bound")
    rules = [
        {"ID": "archive", "Filter": {"Prefix": "a/"}, "Status": "Enabled",
         "Transitions": [{"Days": 30, "StorageClass": "GLACIER"}],
         "Expiration": {"Days": 365}},
        {"ID": "cold", "Filter": {"Prefix": "b/"}, "Status": "Enabled",
         "Transitions": [{"Days": 0, "StorageClass": "COLD"}],
         "NoncurrentVersionTransitions": [{"NoncurrentDays": 5, "StorageClass": "GLACIER",
                                           "NewerNoncurrentVersions": 2}]},
    ]
    put_rules(s3, "bound", rules)
    assert rules_of(s3, "bound") == rules
    # The local warm tier is a target too, in bound buckets as in others.
    warm = [{"ID": "warm", "Filter": {"Prefix": "c/"}, "Status": "Enabled",
             "Transitions": [{"Days": 30, "StorageClass": "STANDARD_IA"}],
             "NoncurrentVersionTransitions": [{"NoncurrentDays": 1, "StorageClass": "WARM"}]}]
    put_rules(s3, "bound", warm)
    assert rules_of(s3, "bound") == warm


@pytest.mark.upstream
def test_transition_to_glacier_moves_the_object_upstream(upstream, strata_factory):
    srv = strata_factory(cold_lifecycle(upstream, delay="1s"))
    s3 = make_client(srv)
    s3.create_bucket(Bucket="archive")
    put_rules(s3, "archive", [glacier_rule("cold/")])
    body = os.urandom(300 * KiB + 7)
    s3.put_object(Bucket="archive", Key="cold/obj.bin", Body=body,
                  ContentType="application/x-e2e", Metadata={"origin": "e2e"})
    s3.put_object(Bucket="archive", Key="hot/obj.bin", Body=b"stays standard")

    wait_until(lambda: storage_class(s3, "archive", "cold/obj.bin") == "GLACIER",
               COLD_TIMEOUT, "cold/obj.bin to move to GLACIER", interval=0.25, srv=srv)
    head = s3.head_object(Bucket="archive", Key="cold/obj.bin")
    assert head["ContentLength"] == len(body)
    assert head["ETag"] == f'"{hashlib.md5(body).hexdigest()}"'
    assert head["ContentType"] == "application/x-e2e"
    assert head["Metadata"] == {"origin": "e2e"}
    assert head["ResponseMetadata"]["HTTPHeaders"].get("x-strata-writeback") == "done"
    assert upstream.body("archive", "cold/obj.bin") == body

    # The local copy is gone: with the upstream cut, the bytes are nowhere to read.
    upstream.proxy.stop()
    no_retry = make_client(srv, retries={"total_max_attempts": 1, "mode": "standard"})
    assert not_served(no_retry, "archive", "cold/obj.bin"), \
        "cold/obj.bin was served with the upstream cut: its local copy was kept"
    upstream.proxy.start()

    got = wait_until(lambda: whole_get(s3, "archive", "cold/obj.bin", body), COLD_TIMEOUT,
                     "a GET of cold/obj.bin reading through again", interval=0.5, srv=srv)
    assert got.get("StorageClass") == "GLACIER"
    assert s3.get_object(Bucket="archive", Key="cold/obj.bin")["Body"].read() == body
    assert storage_class(s3, "archive", "cold/obj.bin") == "GLACIER"
    # Outside the rule's prefix nothing moved.
    assert storage_class(s3, "archive", "hot/obj.bin") == "STANDARD"


@pytest.mark.upstream
def test_no_transition_before_the_object_is_written_back(upstream, strata_factory):
    srv = strata_factory(cold_lifecycle(upstream, delay="1s"))
    s3 = make_client(srv)
    s3.create_bucket(Bucket="held")
    put_rules(s3, "held", [glacier_rule()])
    upstream.proxy.stop()
    body = os.urandom(100 * KiB + 3)
    s3.put_object(Bucket="held", Key="k", Body=body)

    def standard_and_readable():
        head = s3.head_object(Bucket="held", Key="k")
        return (head.get("StorageClass", "STANDARD") == "STANDARD" and
                head["ResponseMetadata"]["HTTPHeaders"].get("x-strata-writeback") == "pending"
                and s3.get_object(Bucket="held", Key="k")["Body"].read() == body)

    # Due after a lifecycle day or two; the write-back delay is 1 s: watch well past both.
    holds(standard_and_readable, 8.0, "k staying STANDARD and readable with the upstream cut",
          srv, interval=0.5)
    assert upstream.get("held", "k") is None

    upstream.proxy.start()
    wait_until(lambda: storage_class(s3, "held", "k") == "GLACIER", DRAIN_TIMEOUT,
               "k to move to GLACIER once the upstream is back", interval=0.5, srv=srv)
    assert upstream.body("held", "k") == body
    assert s3.get_object(Bucket="held", Key="k")["Body"].read() == body


@pytest.mark.upstream
def test_hot_to_warm_to_cold(upstream, strata_factory):
    srv = strata_factory(cold_lifecycle(upstream, delay="1s"))
    s3 = make_client(srv)
    s3.create_bucket(Bucket="tiers")
    put_rules(s3, "tiers", [{"ID": "age", "Filter": {"Prefix": ""}, "Status": "Enabled",
                             "Transitions": [{"Days": 2, "StorageClass": "WARM"},
                                             {"Days": 6, "StorageClass": "GLACIER"}]}])
    body = os.urandom(256 * KiB + 9)
    s3.put_object(Bucket="tiers", Key="ckpt", Body=body)
    assert len(tier_files(srv, "hot")) == 1
    wait_until(lambda: storage_class(s3, "tiers", "ckpt") == "WARM", COLD_TIMEOUT,
               "ckpt to move to WARM", interval=0.2, srv=srv)
    assert len(tier_files(srv, "warm")) == 1 and tier_files(srv, "hot") == []
    assert s3.get_object(Bucket="tiers", Key="ckpt")["Body"].read() == body
    wait_until(lambda: storage_class(s3, "tiers", "ckpt") == "GLACIER", COLD_TIMEOUT,
               "ckpt to move to GLACIER", interval=0.25, srv=srv)
    assert tier_files(srv, "warm") == [] and tier_files(srv, "hot") == []
    assert upstream.body("tiers", "ckpt") == body
    assert s3.get_object(Bucket="tiers", Key="ckpt")["Body"].read() == body


@pytest.mark.upstream
def test_put_with_a_cold_class_leaves_no_local_copy(upstream, strata_factory):
    srv = strata_factory(cold_config(upstream, "1s"))
    s3 = make_client(srv)
    s3.create_bucket(Bucket="frozen")
    body = os.urandom(120 * KiB + 1)
    s3.put_object(Bucket="frozen", Key="k", Body=body, StorageClass="GLACIER")
    assert storage_class(s3, "frozen", "k") == "GLACIER"
    # Acknowledged from the hot tier, then written back, then the local copy goes.
    wait_until(lambda: upstream.get("frozen", "k") is not None and not tier_files(srv, "hot"),
               COLD_TIMEOUT, "k to be written back and its local copy dropped", interval=0.2,
               srv=srv)
    assert upstream.body("frozen", "k") == body
    assert s3.get_object(Bucket="frozen", Key="k")["Body"].read() == body
    assert storage_class(s3, "frozen", "k") == "GLACIER"


@pytest.mark.upstream
def test_versioned_put_with_a_cold_class_leaves_no_local_copy(upstream, strata_factory):
    # Versioned buckets push their history version by version (a path of its own).
    srv = strata_factory(cold_config(upstream, "1s"))
    s3 = make_client(srv)
    s3.create_bucket(Bucket="frozenv")
    s3.put_bucket_versioning(Bucket="frozenv", VersioningConfiguration={"Status": "Enabled"})
    body = os.urandom(90 * KiB + 3)
    put = s3.put_object(Bucket="frozenv", Key="k", Body=body, StorageClass="GLACIER")
    wait_until(lambda: upstream.get("frozenv", "k") is not None and not tier_files(srv, "hot"),
               COLD_TIMEOUT, "the version to be written back and its local copy dropped",
               interval=0.2, srv=srv)
    got = s3.get_object(Bucket="frozenv", Key="k", VersionId=put["VersionId"])
    assert got["Body"].read() == body
