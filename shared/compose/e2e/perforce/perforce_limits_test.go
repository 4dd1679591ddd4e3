package perforce

import (
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

func TestPerforceChecksAreLimitedPerOrganization(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve, e2e.WithP4(e2e.FakeP4(t, e2e.Serve)))
	path := "/organizations/" + w.OrgID + "/perforce"
	wrong := map[string]any{"serverUrl": "ssl:127.0.0.1:1666", "userName": "builder", "ticket": "WRONGTICKET"}
	invalid := map[string]any{"serverUrl": "rsh:/bin/sh", "userName": "builder", "ticket": "x"}
	// Requests refused before p4 runs do not count.
	for range 12 {
		e2e.WantError(t, w.Do(t, "PATCH", path, w.Token, invalid), 400, "validation_failed")
	}
	for range 10 {
		e2e.WantError(t, w.Do(t, "PATCH", path, w.Token, wrong), 400, "perforce_auth_failed")
	}
	r := w.Do(t, "PATCH", path, w.Token, wrong)
	e2e.WantError(t, r, 429, "rate_limited")
	if ra := r.Header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Fatalf("Retry-After %q", ra)
	}
}
