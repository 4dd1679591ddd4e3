// Package engines finds the Unreal Engine installations a build host provides: a directory with
// one installation per version, named by version ($KILN_ENGINES/5.3/Engine/Build/BatchFiles/RunUAT.sh;
// RunUAT.bat on Windows).
package engines

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// RunUATPath is where RunUAT sits inside an engine installation on this machine.
var RunUATPath = RunUATFile(runtime.GOOS)

// RunUATFile is where RunUAT sits inside an engine installation on goos (slash-separated):
// RunUAT.bat on Windows, RunUAT.sh elsewhere.
func RunUATFile(goos string) string {
	if goos == "windows" {
		return "Engine/Build/BatchFiles/RunUAT.bat"
	}
	return "Engine/Build/BatchFiles/RunUAT.sh"
}

// Dir is a directory of engine installations.
type Dir struct {
	Path string
}

// Versions lists the versions installed: subdirectories named by a dotted version that hold
// RunUATPath. A missing directory provides none.
func (d Dir) Versions(ctx context.Context) ([]string, error) {
	entries, err := os.ReadDir(d.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("engines: list %s: %w", d.Path, err)
	}
	var out []string
	for _, e := range entries {
		if !kiln.ValidUEVersion(e.Name()) {
			continue
		}
		if fi, err := os.Stat(filepath.Join(d.Path, e.Name(), RunUATPath)); err == nil && !fi.IsDir() {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out, nil
}

// Resolve returns the installed version a build of `version` uses: the exact version if
// installed, else its major.minor (a build of 5.3.2 uses 5.3.2, else 5.3). ok is false when
// neither is installed.
func (d Dir) Resolve(ctx context.Context, version string) (installed string, ok bool, err error) {
	versions, err := d.Versions(ctx)
	if err != nil {
		return "", false, err
	}
	for _, candidate := range Candidates(version) {
		if slices.Contains(versions, candidate) {
			return candidate, true, nil
		}
	}
	return "", false, nil
}

// Provides reports whether a build of `version` can run here.
func (d Dir) Provides(ctx context.Context, version string) (bool, error) {
	_, ok, err := d.Resolve(ctx, version)
	return ok, err
}

// RunUAT returns the path of RunUAT (RunUATPath) of an installed version.
func (d Dir) RunUAT(installed string) string {
	return filepath.Join(d.Path, installed, RunUATPath)
}

// Candidates lists the installation names that can build `version`, best first.
func Candidates(version string) []string {
	out := []string{version}
	if parts := strings.Split(version, "."); len(parts) == 3 {
		out = append(out, parts[0]+"."+parts[1])
	}
	return out
}

// Versions is a fixed list of installed versions, for hosts whose engines are known by
// configuration rather than found on disk (the AWS build hosts' images).
type Versions []string

// Provides reports whether a build of `version` can run on such a host.
func (v Versions) Provides(ctx context.Context, version string) (bool, error) {
	for _, candidate := range Candidates(version) {
		if slices.Contains(v, candidate) {
			return true, nil
		}
	}
	return false, nil
}

// Versions lists the versions, for messages that say what is available.
func (v Versions) Versions(ctx context.Context) ([]string, error) {
	return slices.Sorted(slices.Values(v)), nil
}

// ParseVersions reads a comma-separated list of engine versions.
func ParseVersions(s string) (Versions, error) {
	var out Versions
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		if !kiln.ValidUEVersion(part) {
			return nil, fmt.Errorf("engines: %q is not an engine version", part)
		}
		out = append(out, part)
	}
	return out, nil
}
