package api

import (
	"os"
	"testing"

	"github.com/kilnbuild/kiln/shared/app/apptest"
)

func TestMain(m *testing.M) { os.Exit(apptest.Main(m)) }

func TestOpenAPIDocumentIsServed(t *testing.T) {
	t.Parallel()
	ts := apptest.StartService(t, apptest.Serve, apptest.NewConfig(t, t.TempDir()))
	r := ts.Do(t, "GET", "/openapi.json", "", nil)
	if r.Status != 200 || r.Body["openapi"] != "3.1.0" {
		t.Fatalf("GET /openapi.json: %d %.200s", r.Status, r.Raw)
	}
}
