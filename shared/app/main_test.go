package app

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kilnbuild/kiln/shared/httpapi/openapi/openapitest"
)

// TestMain fails the run when some operation of the OpenAPI document was never exercised by the
// end-to-end tests here (every request goes through the validating transport).
func TestMain(m *testing.M) {
	code := m.Run()
	if kilnBinaryPath != "" && kilnBinaryErr == nil {
		os.RemoveAll(filepath.Dir(kilnBinaryPath))
	}
	if code == 0 && !testing.Short() && runAll() {
		if missing := openapitest.Uncovered(); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: operations no end-to-end test exercised: %v\n", missing)
			code = 1
		}
	}
	os.Exit(code)
}

// runAll reports whether the whole package ran (no -run or -bench filter), so coverage can be
// judged.
func runAll() bool {
	for _, name := range []string{"test.run", "test.bench", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return true
}

func TestOpenAPIDocumentIsServed(t *testing.T) {
	ts := startService(t, testConfig(t, t.TempDir()))
	r := ts.do(t, "GET", "/openapi.json", "", nil)
	if r.Status != 200 || r.Body["openapi"] != "3.1.0" {
		t.Fatalf("GET /openapi.json: %d %.200s", r.Status, r.Raw)
	}
}
