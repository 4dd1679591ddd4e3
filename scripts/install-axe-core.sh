#!/bin/sh
# install-axe-core.sh installs axe-core (npm, pinned), the accessibility checker the console's
# browser tests run on every page, into <repo>/.cache/axe-core, unless it is already there, and
# prints the path of axe.min.js.
#
# Run it with:  scripts/install-axe-core.sh
# It needs npm.
set -eu

PACKAGE=axe-core
VERSION=4.10.3

root=$(cd "$(dirname "$0")/.." && pwd)
prefix="$root/.cache/axe-core"
script="$prefix/node_modules/$PACKAGE/axe.min.js"

installed_version() {
	sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$prefix/node_modules/$PACKAGE/package.json" 2>/dev/null | head -n 1
}

if [ "$(installed_version)" = "$VERSION" ] && [ -f "$script" ]; then
	echo "$script"
	exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
	echo "install-axe-core: npm is required (apt-get install npm)" >&2
	exit 1
fi

mkdir -p "$prefix"
npm install --prefix "$prefix" --no-save --ignore-scripts --no-audit --no-fund --loglevel=error \
	"$PACKAGE@$VERSION" >&2

if [ ! -f "$script" ]; then
	echo "install-axe-core: $script not found after npm install" >&2
	exit 1
fi
echo "$script"
