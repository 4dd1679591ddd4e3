package app

import (
	"net/netip"
	"testing"
)

func TestPerforceChecksAreLimitedPerOrganization(t *testing.T) {
	p4 := fakeP4(t)
	w := newWorld(t, func(c *Config) {
		c.P4 = p4
		c.OutboundAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	path := "/organizations/" + w.orgID + "/perforce"
	wrong := map[string]any{"serverUrl": "ssl:127.0.0.1:1666", "userName": "builder", "ticket": "WRONGTICKET"}
	invalid := map[string]any{"serverUrl": "rsh:/bin/sh", "userName": "builder", "ticket": "x"}
	// Requests refused before p4 runs do not count.
	for range 12 {
		wantError(t, w.do(t, "PATCH", path, w.token, invalid), 400, "validation_failed")
	}
	for range 10 {
		wantError(t, w.do(t, "PATCH", path, w.token, wrong), 400, "perforce_auth_failed")
	}
	r := w.do(t, "PATCH", path, w.token, wrong)
	wantError(t, r, 429, "rate_limited")
	if ra := r.Header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Fatalf("Retry-After %q", ra)
	}
}
