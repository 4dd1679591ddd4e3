package api

import (
	"net/http"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestGitHubInstallationDescribed: the organization's linked installation is described as GitHub
// describes it (its account's login); none linked is github_not_connected, another installation
// not_found.
func TestGitHubInstallationDescribed(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	path := "/github/installations/" + w.Installation
	e2e.WantError(t, w.Do(t, "GET", path, w.Token, nil), http.StatusConflict, "github_not_connected")
	w.Link(t)
	r := w.Do(t, "GET", path, w.Token, nil)
	if r.Status != http.StatusOK || e2e.Field(t, r.Body, "account") != "studio" {
		t.Fatalf("the linked installation: %d %s", r.Status, r.Raw)
	}
	e2e.WantError(t, w.Do(t, "GET", "/github/installations/9999", w.Token, nil), http.StatusNotFound, "not_found")
}
