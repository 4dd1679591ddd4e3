package main

import (
	"runtime"
	"runtime/debug"
)

// version says which kiln this is: the module version, the commit it was built from (with
// "+dirty" for uncommitted changes) and the Go version, from the build information Go records.
func version() string {
	v, commit, dirty := "(devel)", "unknown", false
	if info, ok := debug.ReadBuildInfo(); ok {
		if info.Main.Version != "" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if dirty {
		commit += "+dirty"
	}
	return "kiln " + v + " commit " + commit + " " + runtime.Version()
}
