#!/bin/sh
# install-stepfunctions-local.sh installs aws-local-stepfunctions (npm, pinned), which runs the
# builds' state machine on this machine for kiln aws-local and its tests, into
# <repo>/.cache/stepfunctions-local, unless it is already there, and prints that directory.
#
# Run it with:  scripts/install-stepfunctions-local.sh
# It needs Node 20 or later and npm.
set -eu

main=$("$(dirname "$0")/install-npm-pinned.sh" aws-local-stepfunctions 3.0.0 stepfunctions-local build/main.node.esm.js)
echo "${main%/node_modules/aws-local-stepfunctions/build/main.node.esm.js}"
