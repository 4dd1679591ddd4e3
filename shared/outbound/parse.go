package outbound

import (
	"fmt"
	"net/netip"
	"strings"
)

// ParseAllow reads KILN_OUTBOUND_ALLOW: comma-separated CIDR ranges, blanks ignored, each masked.
func ParseAllow(s string) ([]netip.Prefix, error) {
	var allow []netip.Prefix
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR range", part)
		}
		allow = append(allow, p.Masked())
	}
	return allow, nil
}

// FormatAllow writes ranges as ParseAllow reads them.
func FormatAllow(allow []netip.Prefix) string {
	parts := make([]string, len(allow))
	for i, p := range allow {
		parts[i] = p.String()
	}
	return strings.Join(parts, ",")
}
