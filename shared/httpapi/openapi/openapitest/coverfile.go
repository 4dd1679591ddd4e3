package openapitest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// WriteCoverage writes this test binary's Coverage as dir/name.json, so that the coverage of
// several test packages, run side by side, can be judged as one (UncoveredIn).
func WriteCoverage(dir, name string) error {
	b, err := json.Marshal(Coverage())
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("coverage directory: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, name+".json"), b, 0o644)
}

// UncoveredIn lists, sorted, the operations of kiln's document that no test binary whose
// coverage is in dir exercised. A directory without any coverage file is an error, not "all
// covered".
func UncoveredIn(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no coverage files in %s", dir)
	}
	union := map[string]int{}
	for op, n := range Coverage() { // every operation of the document, with 0 here
		union[op] = n
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var ops map[string]int
		if err := json.Unmarshal(b, &ops); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for op, n := range ops {
			if _, ok := union[op]; ok {
				union[op] += n
			}
		}
	}
	var out []string
	for op, n := range union {
		if n == 0 {
			out = append(out, op)
		}
	}
	sort.Strings(out)
	return out, nil
}
