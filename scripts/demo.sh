#!/usr/bin/env bash
# make demo: try kiln end to end on this machine, without a GitHub App or an Unreal Engine.
# It starts the fake GitHub of the tests on a fixed loopback port, installs the stand-in engine,
# starts `kiln serve` wired to both with its own data directory, and prints the owner's token and
# the curl commands that go from linking the installation to a downloaded, MD5-verified artifact.
# Ctrl-C stops everything it started and ends the script with status 0 (a stop asked for is not an
# error: `make demo` then prints no "Error"). Every other KILN_* variable of the environment
# reaches kiln serve unchanged.
#
# Each demo keeps everything in a directory of its own port, $KILN_DEMO_DIR/$KILN_DEMO_PORT
# (.demo/8090 by default), so demos on other ports run side by side. A demo started where
# another still runs (the same directory and port) is refused, naming the running one: it never
# deletes another demo's data.
#
#   KILN_DEMO_DIR          where demos keep their binaries, data, engine and logs, one
#                          directory per port (default .demo)
#   KILN_DEMO_PORT         kiln's port on 127.0.0.1 (default 8090)
#   KILN_DEMO_GITHUB_PORT  the fake GitHub's port on 127.0.0.1 (default 9091)
#   KILN_DEMO_SIGNUP       1: try sign-up in the console as a newcomer would: kiln serve gets
#                          KILN_SIGNUP=github and the fake GitHub the App's OAuth client and its
#                          install page; the script then prints the console steps (sign in with
#                          GitHub, create an organization, link GitHub, add demo/shooter, invite
#                          the fake's second account, ada, and join as ada) instead
#                          of the curl steps, which link the installation by id (refused once the
#                          OAuth client is set). Unset or 0: the curl steps.
set -euo pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}
dir=${KILN_DEMO_DIR:-.demo}
port=${KILN_DEMO_PORT:-8090}
ghport=${KILN_DEMO_GITHUB_PORT:-9091}
signup=${KILN_DEMO_SIGNUP:-0}
case $signup in
0 | 1) ;;
*)
	echo "demo: KILN_DEMO_SIGNUP is 1 (sign-up in the console) or 0 (the curl steps), not \"$signup\"" >&2
	exit 2
	;;
esac
for setting in "KILN_DEMO_PORT=$port" "KILN_DEMO_GITHUB_PORT=$ghport"; do
	if [[ ! ${setting#*=} =~ ^[0-9]+$ ]]; then
		echo "demo: ${setting%%=*} is a port number, not \"${setting#*=}\"" >&2
		exit 2
	fi
done
mkdir -p "$dir/$port"
dir=$(cd "$dir/$port" && pwd)

fail() {
	echo "demo: $*" >&2
	exit 1
}

pids=()
lock=$dir/demo.lock
locked=0
# shellcheck disable=SC2317 # the traps call it
stop() {
	# Further Ctrl-Cs are ignored while stopping (not reset to the default, which would end the
	# script by SIGINT and make `make` say "Interrupt").
	trap '' INT TERM
	trap - EXIT
	if ((${#pids[@]})); then
		echo "demo: stopping what it started" >&2
		kill -TERM "${pids[@]}" 2>/dev/null || true
		wait "${pids[@]}" 2>/dev/null || true
		pids=()
	fi
	if ((locked)); then
		rm -f "$lock"
		locked=0
	fi
}
# shellcheck disable=SC2317 # the traps call it
stopped() {
	stop
	echo "demo: stopped" >&2
	exit 0
}
# Ctrl-C (INT) or kill (TERM): stop what the demo started, and end as asked, with status 0.
trap stopped INT TERM
trap stop EXIT

# One demo per directory. The lock file holds its demo's pid, fake GitHub port and start time;
# a lock whose demo is gone (killed) is taken over.
take_lock() { (set -o noclobber && printf '%s %s %s\n' "$$" "$ghport" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$lock") 2>/dev/null; }
# demo_alive PID: that process runs, and (where /proc tells) it is a demo script.
demo_alive() {
	[[ $1 =~ ^[0-9]+$ ]] && kill -0 "$1" 2>/dev/null || return 1
	[[ ! -r /proc/$1/cmdline ]] || grep -qa 'demo\.sh' "/proc/$1/cmdline"
}
if ! take_lock; then
	other='' other_gh='' since=''
	read -r other other_gh since <"$lock" || true
	if demo_alive "$other"; then
		cat >&2 <<REFUSED
demo: another demo runs here: pid $other, started $since, kiln on 127.0.0.1:$port and its fake
      GitHub on 127.0.0.1:$other_gh, with its data in $dir. It is left as it is.
      Stop it first (Ctrl-C where it runs), or run this one beside it on other ports:
      KILN_DEMO_PORT=$((port + 1)) KILN_DEMO_GITHUB_PORT=$((ghport + 1)) make demo
REFUSED
		exit 2
	fi
	rm -f "$lock"
	take_lock || fail "cannot take $lock (another demo starting at the same moment?)"
fi
locked=1
# A kiln serve left running by a demo that was killed still holds its data (kiln serve keeps an
# flock on serve.lock): keep that data too.
if [[ -e $dir/data/serve.lock ]] && command -v flock >/dev/null && ! flock -n "$dir/data/serve.lock" true; then
	holder=$(tr -dc '0-9' <"$dir/data/serve.lock" || true)
	cat >&2 <<REFUSED
demo: a kiln serve (pid ${holder:-unknown}) still runs on $dir/data, left by a demo that did not
      stop it; its data is left as it is. Stop it first (kill ${holder:-<pid>}), or run this demo
      on other ports: KILN_DEMO_PORT=$((port + 1)) KILN_DEMO_GITHUB_PORT=$((ghport + 1)) make demo
REFUSED
	exit 2
fi

# kiln runs every build in a bubblewrap sandbox, as `make run` installs it.
scripts/install-bubblewrap.sh || echo "demo: without bubblewrap kiln starts, but its builds fail (see above)" >&2

# The first compile takes minutes (Go compiles kiln's dependencies once, then reuses its cache):
# say so, and show that it is still going.
echo "demo: compiling kiln and the fake GitHub into $dir/bin; the first time takes several minutes on 2 cores (Go compiles every dependency once), later runs seconds" >&2
mkdir -p "$dir/bin"
"$GO" build -o "$dir/bin/" ./cmd/kiln ./cmd/fakegithub &
pids+=($!)
started=$SECONDS
while kill -0 "${pids[0]}" 2>/dev/null; do
	sleep 1
	elapsed=$((SECONDS - started))
	if ((elapsed % 15 == 0)); then
		echo "demo: still compiling… ${elapsed} s" >&2
	fi
done
code=0
wait "${pids[0]}" || code=$?
if ((code)); then
	pids=()
	case $code in 130 | 143) stopped ;; esac # Ctrl-C while compiling
	fail "compiling failed (see above)"
fi
pids=()
echo "demo: compiled in $((SECONDS - started)) s" >&2

# A fresh data directory each time, so the owner's token is printed again.
rm -rf "$dir/data" "$dir/github.env"
# The stand-in engine as Unreal Engine 5.3 (not Unreal: it only writes UE5's archive layout).
rm -rf "$dir/engines/5.3"
mkdir -p "$dir/engines/5.3"
cp -R testdata/fake-engine/. "$dir/engines/5.3/"

fakegithub=(--addr "127.0.0.1:$ghport" --env "$dir/github.env")
if ((signup)); then
	# The App's OAuth client (sign-in, and the verified install flow), and its Setup URL: kiln's
	# install callback, where the fake's install page sends the installer.
	fakegithub+=(--oauth-client --setup-url "http://127.0.0.1:$port/integrations/github/callback")
	export KILN_SIGNUP=github
fi
"$dir/bin/fakegithub" "${fakegithub[@]}" >"$dir/fakegithub.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
	[[ -s $dir/github.env ]] && break
	kill -0 "${pids[0]}" 2>/dev/null || fail "the fake GitHub did not start (port $ghport taken? set KILN_DEMO_GITHUB_PORT):
$(cat "$dir/fakegithub.log")"
	sleep 0.1
done
[[ -s $dir/github.env ]] || fail "the fake GitHub did not start in 10 s"
set -a
# shellcheck disable=SC1091
. "$dir/github.env"
set +a

KILN_DATA="$dir/data" KILN_ENGINES="$dir/engines" KILN_ADDR="127.0.0.1:$port" \
	KILN_PUBLIC_URL="http://127.0.0.1:$port" \
	"$dir/bin/kiln" serve >"$dir/kiln.out" 2>"$dir/kiln.log" &
pids+=($!)
token=
for _ in $(seq 600); do
	token=$(grep -oE 'kiln_[0-9A-Za-z]{40}' "$dir/kiln.out" | head -n1 || true)
	[[ -n $token ]] && break
	kill -0 "${pids[1]}" 2>/dev/null || fail "kiln serve did not start (port $port taken? set KILN_DEMO_PORT):
$(tail -n 20 "$dir/kiln.log")"
	sleep 0.1
done
[[ -n $token ]] || fail "kiln serve printed no token in 60 s; see $dir/kiln.log"

if ((signup)); then
	cat <<SIGNUP
demo: kiln serves http://127.0.0.1:$port with sign-up open (data in $dir/data, log in $dir/kiln.log),
      with a fake GitHub on 127.0.0.1:$ghport: installation 1 (account demo), repository demo/shooter,
      and the GitHub accounts octo-dev and ada (ada@example.com, a teammate to invite) to sign in with.

The owner's API token: $token
(it acts for the first organization, made at kiln's first start; a newcomer needs none)

Sign up as a newcomer would, in a browser:
  1. Open http://127.0.0.1:$port/console/ and choose "Sign in with GitHub"; on the fake GitHub's
     page, continue as octo-dev.
  2. On "Your account", create an organization.
  3. On its Organization page, "Link GitHub": the fake GitHub's install page opens in a new tab;
     choose "Install on demo". That tab comes back to kiln, which links the installation; close it.
  4. On Projects, add the GitHub repository demo/shooter, then add a build setting (Linux,
     Shipping, 5.3) and trigger a build.
  5. Invite a teammate: on the Organization page, invite ada@example.com as a member and copy
     the link. Open it in a private window (the console's session stays in its own window),
     "Sign in with GitHub" there, continue as ada, and join.

Ctrl-C here stops kiln and the fake GitHub (a build still running then fails as interrupted).
SIGNUP
else
	cat <<STEPS
demo: kiln serves http://127.0.0.1:$port (data in $dir/data, log in $dir/kiln.log),
      with a fake GitHub on 127.0.0.1:$ghport: installation 1, repository demo/shooter.

The owner's API token: $token

Web console: open http://127.0.0.1:$port/console/ and paste that token (link GitHub installation 1
by id on the Organization page, then add demo/shooter on Projects). Or, in another terminal, paste these steps (bash, curl):

# --- demo steps ---
export KILN=http://127.0.0.1:$port TOKEN=$token
STEPS
	cat <<'STEPS'
( # a subshell: the first step that fails stops the steps, with the API's message
set -euo pipefail
# api METHOD PATH [BODY] prints the answer; an HTTP error prints the API's message and stops.
api() {
	local out code
	out=$(curl -sS -X "$1" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' ${3:+-d "$3"} \
		-w '\n%{http_code}' "$KILN$2") || { echo "demo: $1 $2: kiln did not answer" >&2; return 1; }
	code=${out##*$'\n'} out=${out%$'\n'*}
	if ((code >= 400)); then
		echo "demo: $1 $2 answered $code: $(field message <<<"$out")" >&2
		return 1
	fi
	printf '%s\n' "$out"
}
# field NAME prints the first string NAME of the JSON on stdin (no jq needed).
field() { grep -oE "\"$1\":\"([^\"\\\\]|\\\\.)*\"" | head -n1 | sed -E 's/^"[^"]*":"//; s/"$//'; }
ORG=$(api GET /auth/me | grep -oE '"organization":\{"id":"[^"]*"' | field id)
# Link the fake GitHub's installation 1 to the organization
api PATCH "/organizations/$ORG" '{"integrationSettings":{"github":{"installationId":"1"}}}' >/dev/null
# A project from demo/shooter (kiln finds Shooter/Shooter.uproject), a build setting, a build
PROJECT=$(api POST /projects/add-repo '{"name":"Shooter","installationId":"1","repoFullName":"demo/shooter"}' | field id)
SETTING=$(api POST "/projects/$PROJECT/build-settings" '{"platform":"Linux","buildType":"Shipping","ueVersion":"5.3","trigger":"manual","branch":"main"}' | field id)
BUILD=$(api POST "/projects/$PROJECT/build-settings/$SETTING/trigger" '{}' | field buildId)
# Follow the log until the build ends, then check it completed
curl -sSfN -H "Authorization: Bearer $TOKEN" "$KILN/builds/$BUILD/logs?follow=1"
STATUS=$(api GET "/builds/$BUILD" | field status)
echo "$STATUS"
[ "$STATUS" = complete ] || { echo "demo: the build is $STATUS: $(api GET "/builds/$BUILD" | field failureReason)" >&2; exit 1; }
# A signed download URL (no token needed, valid 24 hours), the artifact, and its MD5
api GET "/builds/$BUILD/download" >download.json
curl -sSf -o shooter.tar.gz "$(field url <download.json)"
echo "$(field checksumMd5 <download.json)  shooter.tar.gz" | md5sum -c -
tar -tzf shooter.tar.gz
)
# --- end of demo steps ---

Ctrl-C here stops kiln and the fake GitHub (a build still running then fails as interrupted).
STEPS
fi

# Serve until Ctrl-C, or until one of them stops by itself.
set +e
wait -n "${pids[@]}"
code=$?
set -e
# Ctrl-C signals the whole job, kiln and the fake GitHub too, and they stop with status 0 on it.
# Where the script started with SIGINT ignored (a background job of another script: `make demo &`)
# bash cannot trap it, so only their ending tells. They end with 0, or by SIGINT or SIGTERM, only
# when asked to: a stop asked for.
case $code in
0 | 130 | 143) stopped ;;
esac
fail "a demo process ended by itself (exit $code); see $dir/kiln.log and $dir/fakegithub.log"
