package perforce

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// ServerURL is a parsed Perforce serverUrl (docs/api.md): <protocol>:<host>:<port>.
//
// Accepted protocols: ssl, ssl4, ssl6, ssl46, ssl64 and plaintext tcp. Nothing else — above all
// not rsh:, which makes the p4 client run a command. Host is a DNS name (letters, digits, '-' and
// '.', labels of 1–63 characters, not starting or ending with '-'), an IPv4 literal or an IPv6
// literal in brackets (ssl6:[2001:db8::1]:1666, the P4PORT syntax; Host then holds the address
// without brackets and without a zone). Port is 1–65535 in plain decimal digits.
type ServerURL struct {
	Protocol string
	Host     string
	Port     int
}

// ErrInvalidServerURL is wrapped by every ParseServerURL error.
var ErrInvalidServerURL = errors.New("perforce: invalid serverUrl")

// protocols maps each accepted protocol to its transport (the p4 -p prefix the client is given
// with the literal address, see Client).
var protocols = map[string]string{
	"ssl": "ssl", "ssl4": "ssl", "ssl6": "ssl", "ssl46": "ssl", "ssl64": "ssl",
	"tcp": "tcp",
}

const maxServerURL = 300

// ParseServerURL parses s strictly; anything it does not accept is an error wrapping
// ErrInvalidServerURL, and it is meant to run before any process is started.
func ParseServerURL(s string) (ServerURL, error) {
	bad := func(why string) (ServerURL, error) {
		return ServerURL{}, fmt.Errorf("%w: %s", ErrInvalidServerURL, why)
	}
	if s == "" {
		return bad("empty")
	}
	if len(s) > maxServerURL {
		return bad("too long")
	}
	for _, r := range s {
		if r <= ' ' || r >= 0x7f {
			return bad("contains a space, a control or a non-ASCII character")
		}
	}
	proto, rest, ok := strings.Cut(s, ":")
	if !ok {
		return bad("expected <protocol>:<host>:<port>")
	}
	if _, ok := protocols[proto]; !ok {
		return bad(fmt.Sprintf("protocol %q is not one of ssl, ssl4, ssl6, ssl46, ssl64, tcp", proto))
	}
	i := strings.LastIndexByte(rest, ':')
	if i < 0 {
		return bad("missing port")
	}
	host, portStr := rest[:i], rest[i+1:]
	port, err := parsePort(portStr)
	if err != nil {
		return bad(err.Error())
	}
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") {
			return bad("unterminated IPv6 literal")
		}
		a, err := netip.ParseAddr(host[1 : len(host)-1])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return bad("invalid IPv6 literal")
		}
		if proto == "ssl4" {
			return bad("ssl4 with an IPv6 address")
		}
		return ServerURL{Protocol: proto, Host: a.String(), Port: port}, nil
	}
	if err := checkHostname(host); err != nil {
		return bad(err.Error())
	}
	if a, err := netip.ParseAddr(host); err == nil && proto == "ssl6" && a.Is4() {
		return bad("ssl6 with an IPv4 address")
	}
	return ServerURL{Protocol: proto, Host: strings.ToLower(host), Port: port}, nil
}

func parsePort(s string) (int, error) {
	if s == "" {
		return 0, errors.New("missing port")
	}
	if len(s) > 5 || strings.Trim(s, "0123456789") != "" {
		return 0, errors.New("port is not a number")
	}
	p, _ := strconv.Atoi(s)
	if p < 1 || p > 65535 {
		return 0, errors.New("port out of range")
	}
	return p, nil
}

// checkHostname accepts a DNS name or an IPv4 literal (which is a valid name by these rules).
func checkHostname(h string) error {
	if h == "" {
		return errors.New("empty host")
	}
	if len(h) > 253 {
		return errors.New("host too long")
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" || len(label) > 63 {
			return errors.New("invalid host")
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return errors.New("host label starts or ends with '-'")
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return fmt.Errorf("invalid character %q in host", r)
			}
		}
	}
	return nil
}

// String returns the canonical serverUrl.
func (u ServerURL) String() string {
	h := u.Host
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	return fmt.Sprintf("%s:%s:%d", u.Protocol, h, u.Port)
}

// SSL reports whether the server is reached over SSL (and so has a fingerprint to trust).
func (u ServerURL) SSL() bool { return protocols[u.Protocol] == "ssl" }
