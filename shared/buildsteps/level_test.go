package buildsteps

import (
	"strings"
	"testing"
)

func TestLineLevel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line string
		want Level
	}{
		{"ERROR: UnrealBuildTool failed", LevelError},
		{"  ERROR: indented", LevelError},
		{"LogCook: Error: Failed to cook /Game/Maps/Main", LevelError},
		{"[2024.01.02-03.04.05:678][  0]LogCook: Error: behind a timestamp", LevelError},
		{"UATHelper: Packaging (Linux): LogInit: Error: relayed", LevelError},
		{"LogWindows: Fatal: crashed", LevelError},
		{"WARNING: Platform SDK not found", LevelWarn},
		{"LogCook: Warning: texture has no mips", LevelWarn},
		{"LogBlueprint_2: Warning: digits and underscores", LevelWarn},
		{"LogInit: Display: Running engine for game: Shooter", LevelInfo},
		{"LogCook: Display: Cooked packages 42 Packages Remain 0 Total 42", LevelInfo},
		{"Error: no category", LevelInfo},
		{"Warning: no category", LevelInfo},
		{"The error count is 0", LevelInfo},
		{"LogCook: Display: 0 Error(s), 1 Warning(s)", LevelInfo},
		{"error: lower case is not UAT's", LevelInfo},
		{"********** BUILD COMMAND STARTED **********", LevelInfo},
		{"", LevelInfo},
	} {
		if got := LineLevel(tc.line); got != tc.want {
			t.Errorf("LineLevel(%q) = %s, want %s", tc.line, got, tc.want)
		}
	}
}

func TestBannerStage(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]Stage{
		"********** BUILD COMMAND STARTED **********":                              StageCompile,
		"********** COOK COMMAND STARTED **********":                               StageCook,
		"********** STAGE COMMAND STARTED **********":                              StageStage,
		"********** PACKAGE COMMAND STARTED **********":                            StagePackage,
		"********** ARCHIVE COMMAND STARTED **********":                            StagePackage,
		"UATHelper: Packaging (Linux): ********** COOK COMMAND STARTED **********": StageCook,
		"********** COOK COMMAND COMPLETED **********":                             "",
		"********** REBUILD LIGHT MAPS COMMAND STARTED **********":                 "",
		"BUILD COMMAND STARTED":                                                    "",
	} {
		got, ok := bannerStage(line)
		if got != want || ok != (want != "") {
			t.Errorf("bannerStage(%q) = %q %v, want %q", line, got, ok, want)
		}
	}
}

func TestReadLines(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", maxLineBytes+10)
	in := "one\r\ntwo\n\n" + long + "\nbad \xff utf8\nlast without newline"
	var got []string
	readLines(strings.NewReader(in), func(l string) { got = append(got, l) })
	want := []string{"one", "two", "", strings.Repeat("x", maxLineBytes) + " [line cut]", "bad \uFFFD utf8", "last without newline"}
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %.40q..., want %.40q...", i, got[i], want[i])
		}
	}
}

func TestValidBranch(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"main": true, "feature/x-1": true, "release/5.3": true, "user@host": true,
		"": false, "-x": false, "--upload-pack=x": false, "a..b": false, "a b": false, "a:b": false,
		"a~1": false, "a^": false, "a?": false, "a*": false, "a[": false, `a\b`: false, "a/": false,
		"/a": false, "a.lock": false, "a/.b": false, ".a": false, "a@{1}": false, "@": false, "a\x00": false, "a//b": false,
	} {
		if got := validBranch(name); got != want {
			t.Errorf("validBranch(%q) = %v, want %v", name, got, want)
		}
	}
}
