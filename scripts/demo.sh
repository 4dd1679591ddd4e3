#!/usr/bin/env bash
# make demo: try kiln end to end on this machine, without a GitHub App or an Unreal Engine.
# It starts the fake GitHub of the tests on a fixed loopback port, installs the stand-in engine,
# starts `kiln serve` wired to both with its own data directory, and prints the owner's token and
# the curl commands that go from linking the installation to a downloaded, MD5-verified artifact.
# Ctrl-C stops everything it started. Every other KILN_* variable of the environment reaches
# kiln serve unchanged.
#
#   KILN_DEMO_DIR          where the demo keeps its binaries, data, engine and logs (default .demo)
#   KILN_DEMO_PORT         kiln's port on 127.0.0.1 (default 8090)
#   KILN_DEMO_GITHUB_PORT  the fake GitHub's port on 127.0.0.1 (default 9091)
set -euo pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}
dir=${KILN_DEMO_DIR:-.demo}
port=${KILN_DEMO_PORT:-8090}
ghport=${KILN_DEMO_GITHUB_PORT:-9091}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

pids=()
stop() {
	trap - INT TERM EXIT
	if ((${#pids[@]})); then
		echo "demo: stopping kiln and the fake GitHub" >&2
		kill -TERM "${pids[@]}" 2>/dev/null || true
		wait "${pids[@]}" 2>/dev/null || true
	fi
}
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM
trap stop EXIT

fail() {
	echo "demo: $*" >&2
	exit 1
}

echo "demo: building kiln and the fake GitHub into $dir/bin" >&2
"$GO" build -o "$dir/bin/kiln" ./cmd/kiln
"$GO" build -o "$dir/bin/fakegithub" ./cmd/fakegithub

# A fresh data directory each time, so the owner's token is printed again.
rm -rf "$dir/data" "$dir/github.env"
# The stand-in engine as Unreal Engine 5.3 (not Unreal: it only writes UE5's archive layout).
rm -rf "$dir/engines/5.3"
mkdir -p "$dir/engines/5.3"
cp -R testdata/fake-engine/. "$dir/engines/5.3/"

"$dir/bin/fakegithub" --addr "127.0.0.1:$ghport" --env "$dir/github.env" >"$dir/fakegithub.log" 2>&1 &
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

cat <<STEPS
demo: kiln serves http://127.0.0.1:$port (data in $dir/data, log in $dir/kiln.log),
      with a fake GitHub on 127.0.0.1:$ghport: installation 1, repository demo/shooter.

The owner's API token: $token

Web console: open http://127.0.0.1:$port/console/ and paste that token (link GitHub installation 1
by id on the Organization page, then add demo/shooter on Projects). Or, in another terminal, paste these steps (bash, curl, python3):

# --- demo steps ---
export KILN=http://127.0.0.1:$port TOKEN=$token
json() { python3 -c "import json,sys; print(json.load(sys.stdin)\$1)"; }
H="Authorization: Bearer \$TOKEN"
ORG=\$(curl -sf -H "\$H" \$KILN/auth/me | json '["organization"]["id"]')
# Link the fake GitHub's installation 1 to the organization
curl -sf -X PATCH -H "\$H" -d '{"integrationSettings":{"github":{"installationId":"1"}}}' \$KILN/organizations/\$ORG >/dev/null
# A project from demo/shooter (kiln finds Shooter/Shooter.uproject), a build setting, a build
PROJECT=\$(curl -sf -X POST -H "\$H" -d '{"name":"Shooter","installationId":"1","repoFullName":"demo/shooter"}' \$KILN/projects/add-repo | json '["id"]')
SETTING=\$(curl -sf -X POST -H "\$H" -d '{"platform":"Linux","buildType":"Shipping","ueVersion":"5.3","trigger":"manual","branch":"main"}' \$KILN/projects/\$PROJECT/build-settings | json '["id"]')
BUILD=\$(curl -sf -X POST -H "\$H" -d '{}' \$KILN/projects/\$PROJECT/build-settings/\$SETTING/trigger | json '["buildId"]')
# Follow the log until the build ends, then check it completed
curl -sfN -H "\$H" "\$KILN/builds/\$BUILD/logs?follow=1"
curl -sf -H "\$H" \$KILN/builds/\$BUILD | json '["status"]'
# A signed download URL (no token needed, valid 24 hours), the artifact, and its MD5
curl -sf -H "\$H" \$KILN/builds/\$BUILD/download >download.json
curl -sf -o shooter.tar.gz "\$(json '["url"]' <download.json)"
echo "\$(json '["checksumMd5"]' <download.json)  shooter.tar.gz" | md5sum -c -
tar -tzf shooter.tar.gz
# --- end of demo steps ---

Ctrl-C here stops kiln and the fake GitHub (a build still running then fails as interrupted).
STEPS

# Serve until Ctrl-C, or until one of them stops by itself.
set +e
wait -n "${pids[@]}"
code=$?
set -e
fail "a demo process ended by itself (exit $code); see $dir/kiln.log and $dir/fakegithub.log"
