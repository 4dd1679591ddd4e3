package main

import (
	"net/netip"
	"slices"
	"testing"
)

// TestP4VerifierAllowsKILN_OUTBOUND_ALLOW: a host checks its Perforce server's address against
// KILN_OUTBOUND_ALLOW, as the service did when the credentials were saved; a bad range stops it.
func TestP4VerifierAllowsKILN_OUTBOUND_ALLOW(t *testing.T) {
	for _, tc := range []struct {
		allow string
		want  []netip.Prefix
		err   bool
	}{
		{"", nil, false},
		{"127.0.0.0/8, 10.0.0.0/8", []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8")}, false},
		{"127.0.0.1", nil, true},
	} {
		env := map[string]string{"KILN_OUTBOUND_ALLOW": tc.allow, "KILN_P4": "/opt/p4"}
		v, err := p4Verifier(func(k string) string { return env[k] }, t.TempDir())
		if tc.err {
			if err == nil {
				t.Errorf("%q: no error", tc.allow)
			}
			continue
		}
		if err != nil || !slices.Equal(v.Allow, tc.want) || v.P4 != "/opt/p4" {
			t.Errorf("%q: %+v, %v; want Allow %v", tc.allow, v, err, tc.want)
		}
	}
}
