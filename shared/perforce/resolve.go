package perforce

import (
	"context"
	"fmt"
	"net"
	"net/netip"

	"github.com/kilnbuild/kiln/shared/outbound"
)

// Resolver looks host names up; *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Resolve turns u into the literal address the p4 client is given (Client.Address): the host is
// looked up here (an IP literal is used as is), in the address families the protocol names (ssl,
// ssl4 and tcp: IPv4, as p4 does; ssl6: IPv6; ssl46: IPv4 then IPv6; ssl64: IPv6 then IPv4), and
// the first address that outbound.Allowed accepts is returned. When every address is refused the
// error wraps an *outbound.BlockedError. Passing the literal to p4 means p4 does no lookup of its
// own, so a DNS answer that changes between the check and the connection cannot get past it.
func Resolve(ctx context.Context, r Resolver, u ServerURL, allow []netip.Prefix) (netip.AddrPort, error) {
	if r == nil {
		r = net.DefaultResolver
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(u.Host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		for _, network := range families(u.Protocol) {
			as, err := r.LookupNetIP(ctx, network, u.Host)
			if err != nil {
				continue
			}
			addrs = append(addrs, as...)
		}
		if len(addrs) == 0 {
			return netip.AddrPort{}, fmt.Errorf("perforce: resolve %s: %w", u.Host, ErrUnreachable)
		}
	}
	var blocked *outbound.BlockedError
	for _, a := range addrs {
		a = a.WithZone("").Unmap()
		if outbound.Allowed(a, allow) {
			return netip.AddrPortFrom(a, uint16(u.Port)), nil
		}
		if blocked == nil {
			blocked = &outbound.BlockedError{Addr: a}
		}
	}
	return netip.AddrPort{}, fmt.Errorf("perforce: resolve %s: %w", u.Host, blocked)
}

func families(protocol string) []string {
	switch protocol {
	case "ssl6":
		return []string{"ip6"}
	case "ssl46":
		return []string{"ip4", "ip6"}
	case "ssl64":
		return []string{"ip6", "ip4"}
	default:
		return []string{"ip4"}
	}
}
