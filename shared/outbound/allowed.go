package outbound

import "net/netip"

// blocked lists the ranges that are not public: refused unless inside Allow.
var blocked = prefixes(
	// IPv4
	"0.0.0.0/8",       // "this network", includes the unspecified 0.0.0.0
	"10.0.0.0/8",      // private (RFC 1918)
	"100.64.0.0/10",   // carrier-grade NAT (RFC 6598)
	"127.0.0.0/8",     // loopback
	"169.254.0.0/16",  // link-local, includes cloud metadata 169.254.169.254
	"172.16.0.0/12",   // private (RFC 1918)
	"192.0.0.0/24",    // IETF protocol assignments
	"192.0.2.0/24",    // documentation (TEST-NET-1)
	"192.168.0.0/16",  // private (RFC 1918)
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // documentation (TEST-NET-2)
	"203.0.113.0/24",  // documentation (TEST-NET-3)
	"224.0.0.0/4",     // multicast
	"240.0.0.0/4",     // reserved, includes the broadcast 255.255.255.255
	// IPv6
	"::/128",         // unspecified
	"::1/128",        // loopback
	"::ffff:0:0/96",  // IPv4-mapped (judged as IPv4 after Unmap, listed for completeness)
	"64:ff9b::/96",   // NAT64 well-known prefix (RFC 6052)
	"64:ff9b:1::/48", // NAT64 local-use prefix (RFC 8215)
	"100::/64",       // discard-only
	"2001::/32",      // Teredo (embeds an obfuscated IPv4 address)
	"2001:db8::/32",  // documentation
	"2002::/16",      // 6to4 (embeds an IPv4 address)
	"fc00::/7",       // unique local
	"fe80::/10",      // link-local
	"fec0::/10",      // site-local (deprecated, private in practice)
	"ff00::/8",       // multicast
	"::/96",          // IPv4-compatible (deprecated, embeds an IPv4 address)
)

// The IPv4-embedding forms.
var (
	ipv4Compatible = netip.MustParsePrefix("::/96")
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local     = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour      = netip.MustParsePrefix("2002::/16")
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// Allowed reports whether a connection to addr may be made: addr is public, or inside one of the
// allow ranges. An IPv4-mapped IPv6 address is judged as the IPv4 address it maps. An IPv6 form
// that embeds an IPv4 address (NAT64, 6to4, IPv4-compatible) is refused unless the IPv6 address is
// inside allow, and then the embedded IPv4 address must pass as well, so that allowing a NAT64
// prefix does not open the metadata service or a private network behind it.
func Allowed(addr netip.Addr, allow []netip.Prefix) bool {
	if !addr.IsValid() {
		return false
	}
	addr = addr.WithZone("").Unmap()
	if !inAllow(addr, allow) && inAny(addr, blocked) {
		return false
	}
	for _, v4 := range embedded(addr) {
		if !Allowed(v4, allow) {
			return false
		}
	}
	return true
}

// embedded returns the IPv4 addresses that an IPv6 address of an IPv4-embedding form may carry.
func embedded(a netip.Addr) []netip.Addr {
	if !a.Is6() {
		return nil
	}
	b := a.As16()
	last32 := netip.AddrFrom4([4]byte(b[12:16]))
	switch {
	case a == netip.IPv6Unspecified() || a == netip.IPv6Loopback():
		return nil // not an embedding; refused as such
	case ipv4Compatible.Contains(a), nat64.Contains(a):
		return []netip.Addr{last32}
	case nat64Local.Contains(a):
		// After a /48 prefix RFC 6052 puts the IPv4 address in bytes 6, 7, 9, 10 and zeroes
		// bytes 11-15; networks using a longer local prefix (usually /96) put it in the last 32
		// bits. A zero suffix means the /48 form.
		if b[11]|b[12]|b[13]|b[14]|b[15] == 0 {
			return []netip.Addr{netip.AddrFrom4([4]byte{b[6], b[7], b[9], b[10]})}
		}
		return []netip.Addr{last32}
	case sixToFour.Contains(a):
		return []netip.Addr{netip.AddrFrom4([4]byte(b[2:6]))}
	}
	return nil
}

func inAny(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// inAllow is inAny that also accepts IPv4 ranges written in IPv4-mapped form (::ffff:10.0.0.0/104).
func inAllow(a netip.Addr, allow []netip.Prefix) bool {
	for _, p := range allow {
		if p.Contains(a) {
			return true
		}
		if pa := p.Addr(); a.Is4() && pa.Is4In6() && p.Bits() >= 96 && netip.PrefixFrom(pa.Unmap(), p.Bits()-96).Contains(a) {
			return true
		}
	}
	return false
}
