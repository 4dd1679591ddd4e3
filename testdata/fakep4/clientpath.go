package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// clientPathError is the real client's check of a local file the server asks it to write (or
// delete): never its tickets or trust file and, when P4CLIENTPATH is set, only inside one of its
// ';'-separated directories and never through "..". It returns the client's message for a
// refused path, "" for a permitted one.
func clientPathError(local string) string {
	roots := os.Getenv("P4CLIENTPATH")
	refused := fmt.Sprintf("File %s is not inside permitted filesystem path %s", local, roots)
	if local == os.Getenv("P4TICKETS") || local == os.Getenv("P4TRUST") {
		return refused
	}
	if roots == "" {
		return "" // without P4CLIENTPATH even a path through ".." is written
	}
	if slices.Contains(strings.Split(filepath.ToSlash(local), "/"), "..") {
		return refused
	}
	cwd, _ := os.Getwd()
	if !filepath.IsAbs(local) {
		local = filepath.Join(cwd, local)
	}
	for _, r := range strings.Split(roots, ";") {
		if r == "" {
			continue
		}
		if r[0] == '.' {
			r = cwd + r[1:]
		}
		r = strings.TrimRight(r, "/")
		if local == r || strings.HasPrefix(local, r+"/") {
			return ""
		}
	}
	return refused
}
