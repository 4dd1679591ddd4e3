#!/bin/sh
# kiln-submit-trigger.sh: a Helix Core change-commit trigger that tells kiln about a submit, so
# that kiln builds the settings with trigger "push" on the stream. See docs/perforce.md.
#
# Usage (from the trigger table, `p4 triggers`):
#   kiln-game-main change-commit //game/main/... "/p4/common/bin/triggers/kiln-submit-trigger.sh //game/main %change%"
#
# Configuration, from the environment of p4d or from the file $KILN_TRIGGER_CONFIG
# (default /etc/kiln/p4-trigger.conf, shell syntax: KILN_URL=https://kiln.example.com):
#   KILN_URL                 kiln's public URL.
#   KILN_TRIGGER_TOKEN_FILE  a file holding only the organization's trigger token (kilnp4_...),
#                            readable by the p4d user alone; default /etc/kiln/p4-trigger-token.
#
# The token is handed to curl on its standard input, never on its command line (where `ps` shows
# it to every user of the machine). The script exits non-zero, with a message p4 shows the
# submitter, when kiln could not be told; the submit itself stands either way.
set -eu

usage() {
	echo "usage: kiln-submit-trigger.sh <//depot/stream> <changelist>" >&2
	exit 2
}
[ $# -eq 2 ] || usage
stream=$1
change=$2

config=${KILN_TRIGGER_CONFIG:-/etc/kiln/p4-trigger.conf}
if [ -r "$config" ]; then
	# shellcheck disable=SC1090
	. "$config"
fi
token_file=${KILN_TRIGGER_TOKEN_FILE:-/etc/kiln/p4-trigger-token}
if [ -z "${KILN_URL:-}" ]; then
	echo "kiln: KILN_URL is not set (in the environment or $config)" >&2
	exit 1
fi

# Only plain stream paths and changelist numbers go into the JSON body.
case $stream in
//*) ;;
*) usage ;;
esac
case $stream in
*[!A-Za-z0-9._/-]*) echo "kiln: unexpected characters in the stream path $stream" >&2; exit 2 ;;
esac
case $change in
'' | *[!0-9]*) usage ;;
esac

if [ ! -r "$token_file" ]; then
	echo "kiln: cannot read the trigger token file $token_file" >&2
	exit 1
fi
token=$(tr -d ' \t\r\n' <"$token_file")

# -H @- reads the header from stdin; --retry covers timeouts, 408, 429 and 5xx answers. On a
# failure kiln's answer (an error envelope saying what is wrong) is shown.
if ! answer=$(printf 'Authorization: Bearer %s\n' "$token" | curl --silent --show-error --fail-with-body \
	--max-time 20 --retry 3 --retry-connrefused --retry-max-time 60 \
	-H @- -H 'Content-Type: application/json' \
	--data-binary "{\"stream\":\"$stream\",\"changelist\":\"$change\"}" \
	"${KILN_URL%/}/webhooks/perforce" 2>&1); then
	echo "kiln: could not tell kiln about change $change on $stream: $answer" >&2
	exit 1
fi
