#!/bin/sh
# install-minio.sh builds the MinIO server (an S3-compatible object store) into
# <repo>/.cache/minio/bin/minio, unless it is already there, and prints the binary's path.
# The s3artifacts tests and the whole-service S3 test start it by themselves on 127.0.0.1.
#
# Run it with:  scripts/install-minio.sh      (the first build takes a few minutes)
set -eu

MODULE=github.com/minio/minio
VERSION=v0.0.0-20260212201848-7aac2a2c5b7c

root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/.cache/minio/bin"
stamp="$bin/minio.version"

if [ -x "$bin/minio" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$VERSION" ]; then
	echo "$bin/minio"
	exit 0
fi

if ! command -v go >/dev/null 2>&1; then
	echo "install-minio: go is required" >&2
	exit 1
fi

mkdir -p "$bin"
# Build into a private directory and move the binary into place, so that a test never finds a
# half-written one.
tmp=$(mktemp -d "$bin/.install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
GOBIN="$tmp" go install "$MODULE@$VERSION" >&2
mv -f "$tmp/minio" "$bin/minio"
echo "$VERSION" >"$stamp"
echo "$bin/minio"
