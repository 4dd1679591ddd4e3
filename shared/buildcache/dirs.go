package buildcache

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// DefaultDirs are the directories of an Unreal project that a cache holds: compiled objects and
// the local derived data cache (cooked data).
var DefaultDirs = []string{"Intermediate", "DerivedDataCache"}

// checkDirs refuses a list of directories that Write and Read cannot use: none, a path that is
// not relative and clean ("Intermediate", "Saved/Cache"), or two of which one holds the other.
func checkDirs(dirs []string) error {
	if len(dirs) == 0 {
		return fmt.Errorf("build cache: no directories to cache")
	}
	for i, d := range dirs {
		if !validName(d) {
			return fmt.Errorf("build cache: directory %q must be a clean relative slash-separated path", d)
		}
		for _, e := range dirs[:i] {
			if d == e || strings.HasPrefix(d, e+"/") || strings.HasPrefix(e, d+"/") {
				return fmt.Errorf("build cache: directories %q and %q overlap", e, d)
			}
		}
	}
	return nil
}

// validName tells whether an archive entry name (slash-separated, relative to the project) is one
// Read accepts: clean, relative, local on this system, and free of backslashes and NUL (so it
// means the same on Windows and Unix).
func validName(name string) bool {
	return name != "" && name != "." && path.Clean(name) == name && !strings.ContainsAny(name, "\\\x00") &&
		filepath.IsLocal(filepath.FromSlash(name))
}

// dirOf is the listed directory that holds name (or is name); false when none does.
func dirOf(name string, dirs []string) (string, bool) {
	for _, d := range dirs {
		if name == d || strings.HasPrefix(name, d+"/") {
			return d, true
		}
	}
	return "", false
}
