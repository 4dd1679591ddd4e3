package outbound

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"time"
)

// Resolver looks host names up; *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// checkLookupTimeout bounds the lookup made when an address is saved.
const checkLookupTimeout = 5 * time.Second

// CheckURL tells, when a customer saves an address, whether kiln may reach it: its host, an IP
// literal or every address the name resolves to now, must be allowed; otherwise the error is a
// *BlockedError. A name that does not resolve (yet) passes: every connection is checked again at
// connect time anyway, which is what keeps DNS tricks out. A nil resolver is net.DefaultResolver.
func CheckURL(ctx context.Context, r Resolver, rawURL string, allow []netip.Prefix) error {
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return nil // the caller's validation says what is wrong with it
	}
	host := u.Hostname()
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		if r == nil {
			r = net.DefaultResolver
		}
		ctx, cancel := context.WithTimeout(ctx, checkLookupTimeout)
		defer cancel()
		addrs, _ = r.LookupNetIP(ctx, "ip", host)
	}
	for _, a := range addrs {
		if a = a.WithZone("").Unmap(); !Allowed(a, allow) {
			return &BlockedError{Addr: a}
		}
	}
	return nil
}
