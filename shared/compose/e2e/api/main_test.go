package api

import (
	"os"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

func TestMain(m *testing.M) { os.Exit(e2e.Main(m)) }

func TestOpenAPIDocumentIsServed(t *testing.T) {
	t.Parallel()
	ts := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, t.TempDir()))
	r := ts.Do(t, "GET", "/openapi.json", "", nil)
	if r.Status != 200 || r.Body["openapi"] != "3.1.0" {
		t.Fatalf("GET /openapi.json: %d %.200s", r.Status, r.Raw)
	}
}
