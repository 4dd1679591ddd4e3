package outbound

import (
	"context"
	"errors"
	"net/netip"
	"testing"
)

type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if as, ok := f[host]; ok {
		return as, nil
	}
	return nil, errors.New("no such host")
}

func TestCheckURL(t *testing.T) {
	r := fakeResolver{
		"public.example":   {netip.MustParseAddr("93.184.216.34")},
		"internal.example": {netip.MustParseAddr("10.1.2.3")},
		"mixed.example":    {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("127.0.0.1")},
	}
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	tests := []struct {
		url     string
		allow   []netip.Prefix
		blocked bool
	}{
		{"https://public.example/upload", nil, false},
		{"https://internal.example/upload", nil, true},
		{"https://mixed.example/upload", nil, true},
		{"https://mixed.example/upload", loopback, false},
		{"http://127.0.0.1:9000/upload", nil, true},
		{"http://127.0.0.1:9000/upload", loopback, false},
		{"http://[::1]:9000/upload", nil, true},
		{"http://169.254.169.254/latest/meta-data", nil, true},
		{"https://unknown.example/upload", nil, false}, // checked again at connect time
		{"not a url", nil, false},
	}
	for _, tt := range tests {
		err := CheckURL(context.Background(), r, tt.url, tt.allow)
		var b *BlockedError
		if got := errors.As(err, &b); got != tt.blocked {
			t.Errorf("CheckURL(%s, allow %v) = %v, want blocked %v", tt.url, tt.allow, err, tt.blocked)
		}
	}
}
