#!/bin/sh
# install-bubblewrap.sh makes sure bwrap (Debian's bubblewrap), which kiln runs every build in,
# is installed: it installs it with apt-get when it is missing and this is a Debian or Ubuntu
# machine run as root, and otherwise says what to do.
set -eu

if command -v bwrap >/dev/null 2>&1; then
	exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "installing bubblewrap (kiln's build sandbox)" >&2
	apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends bubblewrap >/dev/null
	exit 0
fi
echo "kiln runs builds in a bubblewrap sandbox: install bubblewrap (e.g. sudo apt-get install bubblewrap)," >&2
echo "or, for a service that builds for one trusted studio only, set KILN_SANDBOX=off" >&2
exit 1
