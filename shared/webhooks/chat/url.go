package chat

import (
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// maxURL is the longest incoming-webhook URL kept.
const maxURL = 2048

// hosts are where each service's incoming webhooks live, and the paths they start with.
var hosts = map[kiln.WebhookFormat]struct {
	names []string
	paths []string
}{
	kiln.FormatSlack:   {names: []string{"hooks.slack.com"}, paths: []string{"/services/", "/workflows/", "/triggers/"}},
	kiln.FormatDiscord: {names: []string{"discord.com", "discordapp.com", "ptb.discord.com", "canary.discord.com"}, paths: []string{"/api/webhooks/", "/api/v10/webhooks/"}},
}

// CheckURL checks that raw is an incoming-webhook URL of format's service: https, on the
// service's host, under its webhook path. A URL whose host is an IP address inside allow (the
// operator's KILN_OUTBOUND_ALLOW ranges) passes too, http or https and any path: a test server or
// a relay of the operator's. The error never quotes the URL, which is a secret.
func CheckURL(format kiln.WebhookFormat, raw string, allow []netip.Prefix) error {
	want, ok := hosts[format]
	if !ok {
		return fmt.Errorf("format %q has no incoming-webhook URL", format)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || len(raw) > maxURL || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("must be an absolute https URL without credentials, at most %d characters", maxURL)
	}
	if addr, err := netip.ParseAddr(u.Hostname()); err == nil {
		addr = addr.Unmap()
		if slices.ContainsFunc(allow, func(p netip.Prefix) bool { return p.Contains(addr) }) {
			return nil
		}
	}
	host := strings.ToLower(u.Hostname())
	if u.Scheme != "https" || u.Port() != "" || !slices.Contains(want.names, host) ||
		!slices.ContainsFunc(want.paths, func(p string) bool { return strings.HasPrefix(u.EscapedPath(), p) && len(u.EscapedPath()) > len(p) }) {
		return fmt.Errorf("must be a %s incoming-webhook URL: https://%s%s…", format, want.names[0], want.paths[0])
	}
	return nil
}

// tail is how many of the URL's last characters Mask shows.
const tail = 4

// Mask is what may be shown of an incoming-webhook URL: its scheme and host, and the last
// characters of the rest, e.g. "https://hooks.slack.com/…x9Qz".
func Mask(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "…"
	}
	rest := strings.TrimPrefix(raw, u.Scheme+"://"+u.Host)
	if len(rest) > 3*tail {
		rest = rest[len(rest)-tail:]
	} else {
		rest = ""
	}
	return u.Scheme + "://" + u.Host + "/…" + rest
}
