package perforce

import (
	"net/netip"
	"testing"

	"github.com/kilnbuild/kiln/shared/app"
	"github.com/kilnbuild/kiln/shared/app/apptest"
)

func TestPerforceChecksAreLimitedPerOrganization(t *testing.T) {
	t.Parallel()
	p4 := apptest.FakeP4(t, apptest.Serve)
	w := apptest.NewWorld(t, apptest.Serve, func(c *app.Config) {
		c.P4 = p4
		c.OutboundAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	path := "/organizations/" + w.OrgID + "/perforce"
	wrong := map[string]any{"serverUrl": "ssl:127.0.0.1:1666", "userName": "builder", "ticket": "WRONGTICKET"}
	invalid := map[string]any{"serverUrl": "rsh:/bin/sh", "userName": "builder", "ticket": "x"}
	// Requests refused before p4 runs do not count.
	for range 12 {
		apptest.WantError(t, w.Do(t, "PATCH", path, w.Token, invalid), 400, "validation_failed")
	}
	for range 10 {
		apptest.WantError(t, w.Do(t, "PATCH", path, w.Token, wrong), 400, "perforce_auth_failed")
	}
	r := w.Do(t, "PATCH", path, w.Token, wrong)
	apptest.WantError(t, r, 429, "rate_limited")
	if ra := r.Header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Fatalf("Retry-After %q", ra)
	}
}
