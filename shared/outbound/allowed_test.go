package outbound

import (
	"net/netip"
	"testing"
)

// lastAddr is the last address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// TestAllowedRanges checks the first and last address of every refused range, and the addresses
// just outside it, without and with the range in Allow. Nothing is dialled.
func TestAllowedRanges(t *testing.T) {
	// before/after: whether the neighbour just outside the range is allowed ("-" when the range
	// starts or ends the address space). embeds: the range embeds IPv4 addresses, so allowing it
	// is not enough for its first and last address (see TestAllowedEmbedded).
	tests := []struct {
		prefix        string
		before, after string
		embeds        bool
	}{
		{"0.0.0.0/8", "-", "ok", false},
		{"10.0.0.0/8", "ok", "ok", false},
		{"100.64.0.0/10", "ok", "ok", false},
		{"127.0.0.0/8", "ok", "ok", false},
		{"169.254.0.0/16", "ok", "ok", false},
		{"172.16.0.0/12", "ok", "ok", false},
		{"192.0.0.0/24", "ok", "ok", false},
		{"192.0.2.0/24", "ok", "ok", false},
		{"192.168.0.0/16", "ok", "ok", false},
		{"198.18.0.0/15", "ok", "ok", false},
		{"198.51.100.0/24", "ok", "ok", false},
		{"203.0.113.0/24", "ok", "ok", false},
		{"224.0.0.0/4", "ok", "refused", false},  // 240.0.0.0 follows
		{"240.0.0.0/4", "refused", "-", false},   // 239.255.255.255 precedes
		{"::/128", "-", "refused", false},        // ::1 follows
		{"::1/128", "refused", "refused", false}, // inside ::/96
		{"::/96", "-", "ok", true},
		{"64:ff9b::/96", "ok", "ok", true},
		{"64:ff9b:1::/48", "ok", "ok", true},
		{"100::/64", "ok", "ok", false},
		{"2001::/32", "ok", "ok", false},
		{"2001:db8::/32", "ok", "ok", false},
		{"2002::/16", "ok", "ok", true},
		{"fc00::/7", "ok", "ok", false},
		{"fe80::/10", "ok", "refused", false},      // fec0::/10 follows
		{"fec0::/10", "refused", "refused", false}, // between fe80::/10 and ff00::/8
		{"ff00::/8", "refused", "-", false},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			p := netip.MustParsePrefix(tt.prefix)
			first, last := p.Addr(), lastAddr(p)
			for _, a := range []netip.Addr{first, last} {
				if Allowed(a, nil) {
					t.Errorf("Allowed(%s) = true, want false", a)
				}
				if !tt.embeds && !Allowed(a, []netip.Prefix{p}) {
					t.Errorf("Allowed(%s, [%s]) = false, want true", a, p)
				}
			}
			for _, n := range []struct {
				addr netip.Addr
				want string
			}{{first.Prev(), tt.before}, {last.Next(), tt.after}} {
				if n.want == "-" {
					if n.addr.IsValid() {
						t.Fatalf("%s has a neighbour %s; table says none", p, n.addr)
					}
					continue
				}
				if got := Allowed(n.addr, nil); got != (n.want == "ok") {
					t.Errorf("neighbour Allowed(%s) = %v, want %s", n.addr, got, n.want)
				}
			}
		})
	}
}

func TestAllowed(t *testing.T) {
	pfx := func(ss ...string) []netip.Prefix { return prefixes(ss...) }
	tests := []struct {
		addr  string
		allow []netip.Prefix
		want  bool
	}{
		// public
		{"8.8.8.8", nil, true},
		{"1.1.1.1", nil, true},
		{"2606:4700::1111", nil, true},
		{"2a00:1450:4001:80b::200e", nil, true},
		// named cases
		{"169.254.169.254", nil, false}, // cloud metadata
		{"fd00:ec2::254", nil, false},   // AWS IPv6 metadata (unique local)
		{"255.255.255.255", nil, false}, // broadcast
		{"0.0.0.0", nil, false},
		{"::", nil, false},
		{"::1", nil, false},
		{"fe80::1%eth0", nil, false},
		{"ff02::1", nil, false},
		// allow
		{"127.0.0.1", pfx("127.0.0.0/8"), true},
		{"10.1.2.3", pfx("10.0.0.0/8"), true},
		{"10.1.2.3", pfx("10.0.0.0/16"), false},
		{"192.168.1.10", pfx("192.168.1.10/32"), true},
		{"192.168.1.11", pfx("192.168.1.10/32"), false},
		{"fe80::1%eth0", pfx("fe80::/10"), true},
		// IPv4-mapped IPv6 is judged as IPv4
		{"::ffff:127.0.0.1", nil, false},
		{"::ffff:10.0.0.1", nil, false},
		{"::ffff:169.254.169.254", nil, false},
		{"::ffff:8.8.8.8", nil, true},
		{"::ffff:127.0.0.1", pfx("127.0.0.0/8"), true},
		{"127.0.0.1", pfx("::ffff:127.0.0.0/104"), true},
		{"::ffff:127.0.0.1", pfx("::ffff:127.0.0.0/104"), true},
		{"0:0:0:0:0:fffe:ffff:ffff", nil, true}, // just before ::ffff:0:0/96
		{"0:0:0:0:1::", nil, true},              // just after
	}
	for _, tt := range tests {
		if got := Allowed(netip.MustParseAddr(tt.addr), tt.allow); got != tt.want {
			t.Errorf("Allowed(%s, %v) = %v, want %v", tt.addr, tt.allow, got, tt.want)
		}
	}
	if Allowed(netip.Addr{}, pfx("0.0.0.0/0", "::/0")) {
		t.Error("the zero Addr is allowed")
	}
}

// TestAllowedEmbedded: IPv6 forms that embed an IPv4 address are refused unless allowed, and once
// allowed the embedded address is judged too.
func TestAllowedEmbedded(t *testing.T) {
	pfx := func(ss ...string) []netip.Prefix { return prefixes(ss...) }
	tests := []struct {
		addr  string
		allow []netip.Prefix
		want  bool
	}{
		{"64:ff9b::8.8.8.8", nil, false},
		{"64:ff9b::8.8.8.8", pfx("64:ff9b::/96"), true},
		{"64:ff9b::169.254.169.254", pfx("64:ff9b::/96"), false},
		{"64:ff9b::10.0.0.1", pfx("64:ff9b::/96"), false},
		{"64:ff9b::10.0.0.1", pfx("64:ff9b::/96", "10.0.0.0/8"), true},
		{"64:ff9b::127.0.0.1", pfx("127.0.0.0/8"), false}, // the NAT64 form itself is not allowed
		// 64:ff9b:1::/48, RFC 6052 /48 layout: 8.8.8.8 and 10.0.0.1 in bytes 6, 7, 9, 10
		{"64:ff9b:1:808:8:800::", nil, false},
		{"64:ff9b:1:808:8:800::", pfx("64:ff9b:1::/48"), true},
		{"64:ff9b:1:a00:0:100::", pfx("64:ff9b:1::/48"), false},
		// 64:ff9b:1::/48 with a /96 local prefix: IPv4 in the last 32 bits
		{"64:ff9b:1:1::8.8.8.8", pfx("64:ff9b:1::/48"), true},
		{"64:ff9b:1:1::169.254.169.254", pfx("64:ff9b:1::/48"), false},
		// 6to4: 2002:AABB:CCDD::/48 embeds AA.BB.CC.DD
		{"2002:808:808::1", nil, false},
		{"2002:808:808::1", pfx("2002::/16"), true},
		{"2002:a00:1::1", pfx("2002::/16"), false},
		{"2002:7f00:1::1", pfx("2002::/16"), false},
		{"2002:7f00:1::1", pfx("2002::/16", "127.0.0.0/8"), true},
		// IPv4-compatible ::a.b.c.d
		{"::8.8.8.8", nil, false},
		{"::8.8.8.8", pfx("::/96"), true},
		{"::127.0.0.1", pfx("::/96"), false},
		{"::1", pfx("::1/128"), true}, // loopback, not an embedding of 0.0.0.1
	}
	for _, tt := range tests {
		if got := Allowed(netip.MustParseAddr(tt.addr), tt.allow); got != tt.want {
			t.Errorf("Allowed(%s, %v) = %v, want %v", tt.addr, tt.allow, got, tt.want)
		}
	}
}
