// Package repodeps finds kiln's repository above the working directory and runs its
// scripts/install-*.sh, which install aws-local's and the tests' dependencies (DynamoDB Local,
// MinIO, aws-local-stepfunctions) once, cached under <repo>/.cache.
package repodeps

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrNoRepo is Root's error when no directory above the working directory holds go.mod.
var ErrNoRepo = errors.New("no go.mod above the working directory")

// Root walks up from the working directory to the directory holding go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("repository root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ErrNoRepo
		}
		dir = parent
	}
}

// Install runs the repository's scripts/<name> (its standard error goes to this process's) and
// returns the last line it prints: where the dependency it installed is.
func Install(name string) (string, error) {
	root, err := Root()
	if err != nil {
		return "", fmt.Errorf("install with scripts/%s: %w", name, err)
	}
	script := filepath.Join(root, "scripts", name)
	cmd := exec.Command(script)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w", script, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1], nil
}
