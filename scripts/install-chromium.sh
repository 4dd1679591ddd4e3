#!/bin/sh
# install-chromium.sh makes sure chromium (Debian's), which the web console's browser tests drive
# headless, is installed: it installs it with apt-get when it is missing and this is a Debian or
# Ubuntu machine run as root, and otherwise says what to do.
set -eu

if command -v chromium >/dev/null 2>&1; then
	exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "installing chromium (the web console's browser tests)" >&2
	apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >/dev/null
	exit 0
fi
echo "the web console's browser tests need Chromium: install it (e.g. sudo apt-get install chromium)," >&2
echo "or set KILN_TEST_CHROMIUM to a Chromium binary; go test -short skips them when it is missing" >&2
exit 1
