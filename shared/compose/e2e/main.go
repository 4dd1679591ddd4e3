package e2e

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kilnbuild/kiln/shared/httpapi/openapi/openapitest"
	"github.com/kilnbuild/kiln/shared/settings"
)

// Main runs an end-to-end package's tests (call it from TestMain: os.Exit(e2e.Main(m))),
// then stops what its tests shared (DynamoDB Local, MinIO, the kiln binary) and, when the whole
// package ran, records the operations it exercised under $KILN_TEST_OPENAPI_COVERAGE.
func Main(m *testing.M) int {
	code := m.Run()
	stopShared()
	if dir := settings.TestOpenAPICoverage.Get(os.Getenv); dir != "" && code == 0 && runAll() {
		wd, err := os.Getwd() // the package's directory: its name names the file
		if err == nil {
			err = openapitest.WriteCoverage(dir, filepath.Base(wd))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: record the OpenAPI coverage:", err)
			code = 1
		}
	}
	return code
}

// runAll reports whether the whole package ran (no -run, -skip or -bench filter), so its
// coverage counts.
func runAll() bool {
	for _, name := range []string{"test.run", "test.bench", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return true
}

// stopShared removes what the package's tests shared.
func stopShared() {
	stopBackends()
	if KilnBinaryPath != "" && KilnBinaryErr == nil {
		os.RemoveAll(filepath.Dir(KilnBinaryPath))
	}
}
