#!/bin/sh
# install-stepfunctions-local.sh installs aws-local-stepfunctions (npm, pinned), which runs the
# builds' state machine on this machine for kiln aws-local and its tests, into
# <repo>/.cache/stepfunctions-local, unless it is already there, and prints that directory.
#
# Run it with:  scripts/install-stepfunctions-local.sh
# It needs Node 20 or later and npm.
set -eu

PACKAGE=aws-local-stepfunctions
VERSION=3.0.0

root=$(cd "$(dirname "$0")/.." && pwd)
prefix="$root/.cache/stepfunctions-local"

installed_version() {
	sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$prefix/node_modules/$PACKAGE/package.json" 2>/dev/null | head -n 1
}

if [ "$(installed_version)" = "$VERSION" ] && [ -f "$prefix/node_modules/$PACKAGE/build/main.node.esm.js" ]; then
	echo "$prefix"
	exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
	echo "install-stepfunctions-local: npm is required (apt-get install npm)" >&2
	exit 1
fi

mkdir -p "$prefix"
npm install --prefix "$prefix" --no-save --ignore-scripts --no-audit --no-fund --loglevel=error \
	"$PACKAGE@$VERSION" >&2

if [ ! -f "$prefix/node_modules/$PACKAGE/build/main.node.esm.js" ]; then
	echo "install-stepfunctions-local: $PACKAGE not found under $prefix/node_modules" >&2
	exit 1
fi
echo "$prefix"
