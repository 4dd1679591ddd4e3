#!/bin/sh
# install-axe-core.sh installs axe-core (npm, pinned), the accessibility checker the console's
# browser tests run on every page, into <repo>/.cache/axe-core, unless it is already there, and
# prints the path of axe.min.js.
#
# Run it with:  scripts/install-axe-core.sh
# It needs npm.
set -eu
exec "$(dirname "$0")/install-npm-pinned.sh" axe-core 4.10.3 axe-core axe.min.js
