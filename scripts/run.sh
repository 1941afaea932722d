#!/usr/bin/env bash
# Builds a Release strata and runs it with the embedded default configuration
# (conf/strata.toml: all tiers local under ./var/strata). Extra arguments go to strata,
# e.g. `scripts/run.sh --config my.toml`.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/build.sh Release

cat <<'INFO'
strata: S3 endpoint http://127.0.0.1:9000
        access key strata   secret key strata-secret-key   region us-east-1
Try it (Python, boto3):
  import boto3
  s3 = boto3.client("s3", endpoint_url="http://127.0.0.1:9000", aws_access_key_id="strata", aws_secret_access_key="strata-secret-key", region_name="us-east-1")
  s3.create_bucket(Bucket="demo"); s3.put_object(Bucket="demo", Key="hello", Body=b"hi"); print(s3.get_object(Bucket="demo", Key="hello")["Body"].read())
INFO

exec build/release/bin/strata "$@"
