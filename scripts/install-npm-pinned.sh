#!/bin/sh
# install-npm-pinned.sh PACKAGE VERSION DIR FILE installs the npm package PACKAGE at exactly
# VERSION into <repo>/.cache/DIR, unless that version is already there with FILE (a path inside
# the package), and prints the full path of FILE. The install-*.sh scripts of the npm tools the
# tests use call it. It needs npm.
set -eu

package=$1 version=$2 dir=$3 file=$4
root=$(cd "$(dirname "$0")/.." && pwd)
prefix="$root/.cache/$dir"
target="$prefix/node_modules/$package/$file"

installed_version() {
	sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$prefix/node_modules/$package/package.json" 2>/dev/null | head -n 1
}

if [ "$(installed_version)" = "$version" ] && [ -f "$target" ]; then
	echo "$target"
	exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
	echo "install-$dir: npm is required (apt-get install npm)" >&2
	exit 1
fi

mkdir -p "$prefix"
npm install --prefix "$prefix" --no-save --ignore-scripts --no-audit --no-fund --loglevel=error \
	"$package@$version" >&2

if [ ! -f "$target" ]; then
	echo "install-$dir: $target not found after npm install" >&2
	exit 1
fi
echo "$target"
