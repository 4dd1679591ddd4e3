#!/bin/sh
# bench-packaging.sh measures packaging.TarGz against tar -czf and tar -I pigz on a generated
# 1.5 GB staged Unreal build and prints a table (seconds, output size, ratios, peak RSS).
# It needs ~3 GB of free disk under ${TMPDIR:-/tmp} and takes a few minutes. It also runs
# BenchmarkPackagingManifest (a few seconds): what recording the size manifest adds to packaging,
# printed as a ratio against packaging without it.
#
# Run it with:  scripts/bench-packaging.sh
# It installs pigz from Debian when it is missing (as root, or through sudo).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)

if ! command -v pigz >/dev/null 2>&1; then
	echo "bench-packaging: installing pigz" >&2
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		sudo=sudo
	fi
	if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq pigz; } >&2; then
		echo "bench-packaging: could not install pigz; its row is skipped" >&2
	fi
fi

cd "$root"
KILN_BENCH_PACKAGING=1 exec go test -run '^$' -bench Packaging -benchtime 1x -timeout 60m ./shared/packaging/
