// Package outbound connects to customer-supplied addresses (auto deploy receivers, Perforce
// servers) without letting them reach the service's own network: every address a connection is
// about to be made to, after DNS resolution, must be public or inside the operator's Allow list
// (KILN_OUTBOUND_ALLOW). The check runs in net.Dialer.Control, on each resolved address, so DNS
// rebinding, several A records or a redirect to another host cannot slip past it.
package outbound

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"syscall"
	"time"
)

// Default timeouts, used when a Config leaves them zero.
const (
	DefaultConnectTimeout = 10 * time.Second
	// DefaultHeaderTimeout is how long a receiver may take to answer once the whole request,
	// body included, has been sent (a receiver may check a large upload before answering).
	DefaultHeaderTimeout = 2 * time.Minute
)

// Config configures the client and dialer for customer-supplied addresses.
type Config struct {
	// Allow lists ranges that may be reached although not public (KILN_OUTBOUND_ALLOW).
	Allow []netip.Prefix
	// ConnectTimeout bounds establishing a TCP connection; zero means DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// HeaderTimeout bounds the wait for response headers after the request was written; zero
	// means DefaultHeaderTimeout.
	HeaderTimeout time.Duration
}

// BlockedError is the error of a connection refused because its address is not public and not
// allowed. Dial and HTTP errors wrap it: find it with errors.As.
type BlockedError struct {
	Addr netip.Addr
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("outbound: connecting to %s is not allowed (not a public address)", e.Addr)
}

// Dialer returns a dialer that refuses, at connect time, every address that Allowed refuses.
func Dialer(cfg Config) *net.Dialer {
	allow := slices.Clone(cfg.Allow)
	timeout := cfg.ConnectTimeout
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	return &net.Dialer{
		Timeout:   timeout,
		KeepAlive: 30 * time.Second,
		// Control runs for every address tried, after resolution and before connect.
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("outbound: unexpected address %q: %w", address, err)
			}
			if !Allowed(ap.Addr(), allow) {
				return &BlockedError{Addr: ap.Addr().WithZone("")}
			}
			return nil
		},
	}
}

// NewClient returns an HTTP client for customer-supplied URLs: connections through Dialer, never
// through a proxy from the environment, redirects returned to the caller instead of followed (the
// client answers with the 3xx response itself), HTTP/1.1, default TLS.
func NewClient(cfg Config) *http.Client {
	header := cfg.HeaderTimeout
	if header <= 0 {
		header = DefaultHeaderTimeout
	}
	d := Dialer(cfg)
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           dialBigWrites(d),
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: header,
			IdleConnTimeout:       90 * time.Second,
			MaxIdleConns:          16,
			MaxIdleConnsPerHost:   2,
			DisableCompression:    true,
			ForceAttemptHTTP2:     false,
			WriteBufferSize:       64 << 10,
			ReadBufferSize:        64 << 10,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
