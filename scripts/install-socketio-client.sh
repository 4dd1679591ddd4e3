#!/bin/sh
# install-socketio-client.sh installs socket.io-client (npm, pinned), the stock Socket.IO client
# the live events' tests connect with, into <repo>/.cache/socket.io-client, unless it is already
# there, and prints the path of its package.json.
#
# Run it with:  scripts/install-socketio-client.sh
# It needs npm.
set -eu
exec "$(dirname "$0")/install-npm-pinned.sh" socket.io-client 4.8.4 socket.io-client package.json
