#!/usr/bin/env bash
# TEST FIXTURE: a stand-in for Unreal Engine's RunUAT.sh. It is NOT Unreal: it prints output shaped
# like AutomationTool's and writes UE5's BuildCookRun archive layout. See ../../../README.md.
set -euo pipefail
shopt -s nocasematch

uat_exit() { # code, name
	echo "AutomationTool executed for 0h 0m ${SECONDS}s"
	echo "AutomationTool exiting with ExitCode=$1 ($2)"
	exit "$1"
}

echo "Running AutomationTool..."
echo "Parsing command line: $*"

command=${1:-}
if [[ $command != BuildCookRun ]]; then
	echo "ERROR: The fake engine only knows the BuildCookRun command, not '$command'"
	uat_exit 1 Error_Unknown
fi
shift

project='' platform='' clientconfig=Development serverconfig=Development server=0 noclient=0 archivedir=''
for arg in "$@"; do
	case $arg in
	-project=*) project=${arg#*=} ;;
	-platform=*) platform=${arg#*=} ;;
	-targetplatform=*) platform=${arg#*=} ;;
	-clientconfig=*) clientconfig=${arg#*=} ;;
	-serverconfig=*) serverconfig=${arg#*=} ;;
	-server) server=1 ;;
	-noclient) noclient=1 ;;
	-archivedirectory=*) archivedir=${arg#*=} ;;
	*) ;; # -build -cook -stage -pak -archive -unattended -utf8output -noP4 ...: understood, ignored
	esac
done

if [[ -z $project ]]; then
	echo "ERROR: No project file given: BuildCookRun needs -project=<path to .uproject>"
	uat_exit 1 Error_Unknown
fi
if [[ ! -f $project ]]; then
	echo "ERROR: Project file not found: $project"
	uat_exit 1 Error_Unknown
fi
if [[ -z $archivedir ]]; then
	echo "ERROR: -archive needs -archivedirectory=<dir>"
	uat_exit 1 Error_Unknown
fi

projectdir=$(cd "$(dirname "$project")" && pwd)
name=$(basename "$project")
name=${name%.*}
# A test repository steers its own build.
if [[ -f $projectdir/FakeUAT.env ]]; then
	# shellcheck disable=SC1091
	source "$projectdir/FakeUAT.env"
fi
fail=${FAKE_UAT_FAIL:-}
sleep_s=${FAKE_UAT_SLEEP:-0}
pak_mb=${FAKE_UAT_PAK_MB:-1}
pidfile=${FAKE_UAT_PIDFILE:-}
[[ -n $pidfile ]] && echo $$ >>"$pidfile"
shopt -u nocasematch
for knob in FAKE_UAT_OBJECTS FAKE_UAT_COMPILE_MS FAKE_UAT_ASSETS FAKE_UAT_COOK_MS; do
	if [[ ! ${!knob:-0} =~ ^[0-9]+$ ]]; then
		echo "ERROR: $knob must be a whole number, not '${!knob}'"
		uat_exit 1 Error_Unknown
	fi
done

case $platform in
Win64) platformdir=Windows ;;
Linux | LinuxArm64 | Mac | Android | IOS) platformdir=$platform ;;
*)
	echo "ERROR: Unknown platform '$platform'"
	uat_exit 1 Error_Unknown
	;;
esac
if ((server)); then
	target=${name}Server config=$serverconfig platformdir=${platformdir}Server
else
	target=$name config=$clientconfig
fi
# UE's executables: <Target> for Development, else <Target>-<Platform>-<Config>.
exe=$target
[[ $config != Development ]] && exe=$target-$platform-$config

stage_pause() {
	if [[ -z $sleep_s || $sleep_s == 0 ]]; then return 0; fi
	sleep "$sleep_s" &
	local child=$!
	[[ -n $pidfile ]] && echo "$child" >>"$pidfile"
	wait "$child"
}

# pause_ms <ms>: sleep that many milliseconds, in a child process like stage_pause.
pause_ms() {
	(($1 > 0)) || return 0
	local s
	printf -v s '%d.%03d' $(($1 / 1000)) $(($1 % 1000))
	sleep "$s" &
	local child=$!
	[[ -n $pidfile ]] && echo "$child" >>"$pidfile"
	wait "$child"
}

# stamped <file> <stamp>: whether the file's first line is that stamp.
stamped() {
	local line
	[[ -f $1 ]] && IFS= read -r line <"$1" && [[ $line == "$2" ]]
}

# engine_version: the name of the engine's installation directory, $KILN_ENGINES/<version>/.
engine_version() {
	local batch root
	batch=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	root=${batch%/Engine/Build/BatchFiles}
	if [[ $root == "$batch" || -z $root ]]; then
		echo unversioned
	else
		basename "$root"
	fi
}

# source_key: what the compiled objects depend on — the engine version, the target, the
# FAKE_UAT_SOURCE_REV knob and the content of the project's code (Source/**/*.cpp, .h, .cs).
source_key() {
	{
		echo "engine=$engine_version platform=$platform config=$config target=$target rev=${FAKE_UAT_SOURCE_REV:-}"
		if [[ -d $projectdir/Source ]]; then
			(cd "$projectdir" && find Source -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.cs' \) -print0 |
				LC_ALL=C sort -z | xargs -0 -r sha256sum)
		fi
	} | sha256sum | cut -d' ' -f1
}

# compile_objects: UnrealBuildTool's incremental build. Each of the FAKE_UAT_OBJECTS objects is
# Intermediate/Build/<Platform>/<Target>/<Config>/obj<i>.o, stamped with the engine version and
# the source key; one that is missing or stamped otherwise is compiled (FAKE_UAT_COMPILE_MS each).
compile_objects() {
	local n=$((10#${FAKE_UAT_OBJECTS:-0})) ms=$((10#${FAKE_UAT_COMPILE_MS:-0}))
	((n > 0)) || return 0
	local dir=$projectdir/Intermediate/Build/$platform/$target/$config
	local stamp i stale=() j=0
	stamp="FakeObject engine=$engine_version key=$(source_key)"
	for ((i = 1; i <= n; i++)); do
		stamped "$dir/obj$i.o" "$stamp" || stale+=("$i")
	done
	if ((${#stale[@]} > 0)); then
		mkdir -p "$dir"
		echo "Building ${#stale[@]} actions with 1 process..."
		for i in "${stale[@]}"; do
			j=$((j + 1))
			echo "[$j/${#stale[@]}] Compile Module.obj$i.cpp"
			pause_ms "$ms"
			echo "$stamp" >"$dir/obj$i.o"
		done
	else
		echo "Target is up to date"
	fi
	echo "Compile: $((n - ${#stale[@]})) of $n objects up to date"
}

# cook_assets: the cook's derived data cache. Each of the FAKE_UAT_ASSETS assets has an entry
# FakeUAT/<engine version>/<PlatformDir>/Asset<i>.udd in the local cache (UE-LocalDataCachePath,
# else <project dir>/DerivedDataCache); a missing entry (or one stamped otherwise) is a miss,
# cooked (FAKE_UAT_COOK_MS each) and written; a present one is a hit.
cook_assets() {
	local n=$((10#${FAKE_UAT_ASSETS:-0})) ms=$((10#${FAKE_UAT_COOK_MS:-0}))
	((n > 0)) || return 0
	local ddc hits=0 misses=0 i entry stamp
	# The variable's name has a dash, which bash cannot expand: read it from the environment.
	ddc=$(printenv 'UE-LocalDataCachePath' || true)
	[[ -n $ddc ]] || ddc=$projectdir/DerivedDataCache
	echo "LogDerivedDataCache: Display: Local: Data cache path $ddc: ReadWrite"
	local dir=$ddc/FakeUAT/$engine_version/$platformdir
	mkdir -p "$dir"
	for ((i = 1; i <= n; i++)); do
		entry=$dir/Asset$i.udd
		stamp="FakeDDC engine=$engine_version platform=$platformdir asset=/Game/Fake/Asset$i"
		if stamped "$entry" "$stamp"; then
			hits=$((hits + 1))
			continue
		fi
		misses=$((misses + 1))
		echo "LogCook: Display: Cooking /Game/Fake/Asset$i (not in the derived data cache)"
		pause_ms "$ms"
		echo "$stamp" >"$entry"
	done
	echo "LogDerivedDataCache: Display: Local: hits $hits misses $misses of $n assets"
}

stage_fail() { # stage
	[[ $fail == "$1" || ($1 == build && $fail == compile) ]] || return 0
	case $1 in
	build) echo "ERROR: UnrealBuildTool failed: $name/Source/$name.cpp(12): error C2065: 'Undeclared': undeclared identifier (fake)" ;;
	cook) echo "LogCook: Error: Failed to cook /Game/Maps/Main (fake failure requested by FAKE_UAT_FAIL=cook)" ;;
	*) echo "ERROR: $1 failed (fake failure requested by FAKE_UAT_FAIL=$fail)" ;;
	esac
	echo "BUILD FAILED"
	uat_exit 3 Error_Unknown
}

echo "Setting up ProjectParams for $project"
echo "LogInit: Display: Fake engine (kiln test fixture), not Unreal Engine"
engine_version=$(engine_version)
if [[ -f $projectdir/Source/Version.txt ]]; then
	echo "LogInit: Display: Project version: $(head -c 200 "$projectdir/Source/Version.txt")"
fi

echo "********** BUILD COMMAND STARTED **********"
echo "Running: UnrealBuildTool $target $platform $config -Project=$project -NoUBA"
# Unreal's tools refuse root (FUnixPlatformMemory::Init: geteuid() == 0, no flag to override it),
# so UnrealHeaderTool fails the compile, and the cook, as root. So does this stand-in.
if ((EUID == 0)); then
	echo "Refusing to run with the root privileges."
	echo "ERROR: UnrealHeaderTool failed (exit code 1)"
	uat_exit 1 Error_UnknownBuildFailure
fi
stage_pause
if [[ -n ${FAKE_UAT_COMPILE_ERROR:-} ]]; then # <file below the project dir>:<line>, clang's shape
	echo "[1/1] Compile Module.${name}.cpp"
	echo "$projectdir/${FAKE_UAT_COMPILE_ERROR%:*}:${FAKE_UAT_COMPILE_ERROR##*:}:5: error: use of undeclared identifier 'Undeclared' (fake)"
	fail=compile
fi
stage_fail build
echo "Building $target..."
compile_objects
echo "Total execution time: 0.01 seconds"
echo "********** BUILD COMMAND COMPLETED **********"

echo "********** COOK COMMAND STARTED **********"
echo "Running: UnrealEditor-Cmd $project -run=Cook -TargetPlatform=$platformdir -unattended -utf8output"
echo "LogInit: Display: Running engine for game: $name"
stage_pause
echo "LogCook: Warning: /Game/Maps/Main: texture T_Placeholder has no mips (fake warning)"
for ((i = 1; i <= ${FAKE_UAT_LINES:-0}; i++)); do
	echo "LogCook: Display: fake line $i"
	if ((i % 100 == 0)); then sleep 0.05; fi
done
if ((${FAKE_UAT_LONG_LINE:-0} > 0)); then
	head -c "$FAKE_UAT_LONG_LINE" /dev/zero | tr '\0' x
	echo
fi
if ((${FAKE_UAT_ALLOC_MB:-0} > 0)); then
	echo "LogCook: Display: loading ${FAKE_UAT_ALLOC_MB} MiB of assets (fake, FAKE_UAT_ALLOC_MB)"
	# dd's buffer is that big and filled: that much memory, resident.
	dd if=/dev/zero of=/dev/null bs="${FAKE_UAT_ALLOC_MB}M" count=1 status=none
fi
cook_assets
stage_fail cook
echo "LogCook: Display: Cooked packages 42 Packages Remain 0 Total 42"
echo "********** COOK COMMAND COMPLETED **********"

echo "********** STAGE COMMAND STARTED **********"
staging=$projectdir/Saved/StagedBuilds/$platformdir
stage_pause
stage_fail stage
rm -rf "$staging"
mkdir -p "$staging/Engine/Config" "$staging/Engine/Content/SlateDebug/Fonts" "$staging/Engine/Binaries/$platform" \
	"$staging/$name/Binaries/$platform" "$staging/$name/Content/Paks" "$staging/$name/Plugins/FakePlugin"
echo "[Fake] Engine=1" >"$staging/Engine/Config/BaseEngine.ini"
echo "fake font" >"$staging/Engine/Content/SlateDebug/Fonts/LastResort.ttf"
case $platform in
Win64) lib=FakeCore.dll ;;
Mac) lib=libFakeCore.dylib ;;
*) lib=libFakeCore.so ;;
esac
echo "fake engine library" >"$staging/Engine/Binaries/$platform/$lib"
echo '{"FileVersion": 3, "FriendlyName": "FakePlugin"}' >"$staging/$name/Plugins/FakePlugin/FakePlugin.uplugin"
head -c $((pak_mb * 1048576)) /dev/urandom >"$staging/$name/Content/Paks/$name-$platformdir.pak"
if [[ -f $projectdir/Source/Version.txt ]]; then
	cp "$projectdir/Source/Version.txt" "$staging/$name/Version.txt"
fi
binary=$staging/$name/Binaries/$platform/$exe
case $platform in
Win64)
	binary=$binary.exe
	echo "fake Windows launcher" >"$staging/$target.exe"
	;;
Mac)
	mkdir -p "$staging/$target.app/Contents/MacOS"
	echo "fake Mac app" >"$staging/$target.app/Contents/MacOS/$exe"
	;;
Android) echo "fake apk" >"$staging/$target-arm64.apk" ;;
IOS) echo "fake ipa" >"$staging/$target.ipa" ;;
*)
	printf '#!/bin/sh\n# fake launcher\nexec "$(dirname "$0")/%s/Binaries/%s/%s" "$@"\n' "$name" "$platform" "$exe" >"$staging/$target.sh"
	chmod 755 "$staging/$target.sh"
	;;
esac
printf '#!/bin/sh\necho "fake %s (%s %s)"\n' "$target" "$platform" "$config" >"$binary"
chmod 755 "$binary"
# FAKE_UAT_FILES="<path>:<bytes> ...": extra staged files of those sizes (paths below the staged
# build, no spaces, no ..).
for spec in ${FAKE_UAT_FILES:-}; do
	path=${spec%:*} bytes=${spec##*:}
	if [[ -z $path || $path == /* || $path == *..* || ! $bytes =~ ^[0-9]+$ ]]; then
		echo "ERROR: FAKE_UAT_FILES: '$spec' is not <relative path>:<bytes>"
		uat_exit 1 Error_Unknown
	fi
	mkdir -p "$(dirname "$staging/$path")"
	head -c "$bytes" /dev/zero >"$staging/$path"
done
echo "Creating pak using staging manifest (fake): $name-$platformdir.pak"
echo "Stage command time: 0.01 s"
echo "********** STAGE COMMAND COMPLETED **********"

echo "********** PACKAGE COMMAND STARTED **********"
stage_pause
stage_fail package
echo "Package command time: 0.00 s"
echo "********** PACKAGE COMMAND COMPLETED **********"

echo "********** ARCHIVE COMMAND STARTED **********"
stage_fail archive
if [[ ${FAKE_UAT_NO_ARCHIVE:-} == 1 ]]; then
	echo "LogInit: Display: FAKE_UAT_NO_ARCHIVE=1: archiving nothing"
else
	echo "Archiving to $archivedir"
	mkdir -p "$archivedir"
	rm -rf "${archivedir:?}/$platformdir"
	cp -R "$staging" "$archivedir/$platformdir"
fi
echo "********** ARCHIVE COMMAND COMPLETED **********"
echo "BuildCookRun time: ${SECONDS}.00 s"
echo "BUILD SUCCESSFUL"
uat_exit 0 Success
