package perforce

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/kilnbuild/kiln/shared/outbound"
)

type fakeResolver map[string][]netip.Addr // network -> addresses

func (r fakeResolver) LookupNetIP(_ context.Context, network, _ string) ([]netip.Addr, error) {
	return r[network], nil
}

func TestResolve(t *testing.T) {
	r := fakeResolver{
		"ip4": {netip.MustParseAddr("10.0.0.5"), netip.MustParseAddr("93.184.216.34")},
		"ip6": {netip.MustParseAddr("2606:2800:220:1::1")},
	}
	ctx := context.Background()
	tests := []struct {
		url   string
		allow []netip.Prefix
		want  string
	}{
		{"ssl:p4.example.com:1666", nil, "93.184.216.34:1666"},
		{"ssl:p4.example.com:1666", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, "10.0.0.5:1666"},
		{"ssl6:p4.example.com:1666", nil, "[2606:2800:220:1::1]:1666"},
		{"ssl64:p4.example.com:1666", nil, "[2606:2800:220:1::1]:1666"},
		{"tcp:93.184.216.34:1666", nil, "93.184.216.34:1666"},
	}
	for _, tc := range tests {
		u, _ := ParseServerURL(tc.url)
		got, err := Resolve(ctx, r, u, tc.allow)
		if err != nil || got.String() != tc.want {
			t.Errorf("Resolve(%s) = %v, %v; want %s", tc.url, got, err, tc.want)
		}
	}
	for _, s := range []string{"tcp:127.0.0.1:1666", "ssl:169.254.169.254:1666", "ssl6:[::1]:1666"} {
		u, _ := ParseServerURL(s)
		var blocked *outbound.BlockedError
		if _, err := Resolve(ctx, r, u, nil); !errors.As(err, &blocked) {
			t.Errorf("Resolve(%s): %v, want BlockedError", s, err)
		}
	}
}
