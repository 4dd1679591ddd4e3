package engines

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Installation is an engine found in the directory.
type Installation struct {
	Version string
	RunUAT  string // absolute path of its RunUAT (RunUATPath)
}

// Problem is an entry of the directory that is not a usable engine, with why, so the operator
// can fix it (a copy one level too deep, a misspelt version, a RunUAT.sh that cannot run).
type Problem struct {
	Path   string
	Reason string
}

// Scan lists the usable installations and the entries that are not. A missing directory holds
// neither: it is reported as a problem of its own.
func (d Dir) Scan(ctx context.Context) ([]Installation, []Problem, error) {
	root, err := filepath.Abs(d.Path)
	if err != nil {
		return nil, nil, fmt.Errorf("engines: %w", err)
	}
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, []Problem{{Path: root, Reason: "the engines directory does not exist"}}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("engines: list %s: %w", root, err)
	}
	var found []Installation
	var problems []Problem
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if !e.IsDir() {
			continue
		}
		if !kiln.ValidUEVersion(e.Name()) {
			problems = append(problems, Problem{dir, "not named by an engine version such as 5.3 or 5.3.2; ignored"})
			continue
		}
		runUAT := filepath.Join(dir, RunUATPath)
		fi, err := os.Stat(runUAT)
		switch {
		case err != nil:
			problems = append(problems, Problem{dir, "has no " + RunUATPath + nested(dir) + "; ignored"})
		case fi.IsDir():
			problems = append(problems, Problem{dir, RunUATPath + " is a directory; ignored"})
		case runtime.GOOS != "windows" && fi.Mode()&0o111 == 0: // Windows runs RunUAT.bat by its name
			found = append(found, Installation{Version: e.Name(), RunUAT: runUAT})
			problems = append(problems, Problem{dir, RunUATPath + " is not executable (chmod +x it)"})
		default:
			found = append(found, Installation{Version: e.Name(), RunUAT: runUAT})
		}
	}
	return found, problems, nil
}

// nested points at an installation copied one level too deep (cp -r into an existing directory).
func nested(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), RunUATPath)); e.IsDir() && err == nil {
			return " (one is in " + e.Name() + "/: copied one level too deep?)"
		}
	}
	return ""
}
