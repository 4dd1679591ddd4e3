#!/bin/sh
# install-minio.sh builds the MinIO server (an S3-compatible object store) into
# <repo>/.cache/minio/bin/minio, unless it is already there, and prints the binary's path.
# The s3artifacts tests and the whole-service S3 test start it by themselves on 127.0.0.1.
# `install-minio.sh mc` builds MinIO's client mc there too (the upload benchmark's baseline).
#
# Run it with:  scripts/install-minio.sh [mc]      (each build takes a few minutes, once)
set -eu

SERVER=github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c
CLIENT=github.com/minio/mc@v0.0.0-20250313080218-cf909e1063a9

root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/.cache/minio/bin"

# install NAME MODULE@VERSION: go install into $bin/NAME unless that version is there.
install() {
	name=$1 module=$2
	if [ -x "$bin/$name" ] && [ "$(cat "$bin/$name.version" 2>/dev/null)" = "$module" ]; then
		echo "$bin/$name"
		return 0
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
	GOBIN="$tmp" go install "$module" >&2
	mv -f "$tmp/$name" "$bin/$name"
	echo "$module" >"$bin/$name.version"
	rm -rf "$tmp"
	echo "$bin/$name"
}

install minio "$SERVER"
if [ "${1:-}" = mc ]; then
	install mc "$CLIENT"
fi
