package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
)

// NotAPIError is an answer that did not come from kiln's API: a web page (the console's address
// given instead of the service's), or an error without kiln's JSON error envelope (another
// service at that address). The address is most likely wrong.
type NotAPIError struct {
	BaseURL      string
	Method, Path string
	Status       int
	// WebPage: the answer was HTML.
	WebPage bool
}

func (e *NotAPIError) Error() string {
	req := fmt.Sprintf("%s %s: HTTP %d %s", e.Method, e.Path, e.Status, http.StatusText(e.Status))
	if e.WebPage {
		hint := "use the service's base URL"
		if base, ok := consoleBase(e.BaseURL); ok {
			hint = fmt.Sprintf("use the service's base URL %s (without /console/)", base)
		}
		return fmt.Sprintf("%s answered with a web page, not kiln's API (%s): %s", e.BaseURL, req, hint)
	}
	return fmt.Sprintf(`%s does not answer like a kiln API (%s, without kiln's JSON error envelope {"error", "message", "requestId"})`, e.BaseURL, req)
}

// consoleBase is the address before "/console" when base is an address of kiln's console.
func consoleBase(base string) (string, bool) {
	u, err := url.Parse(base)
	if err != nil {
		return "", false
	}
	i := strings.Index(u.Path+"/", "/console/")
	if i < 0 {
		return "", false
	}
	u.Path, u.RawQuery, u.Fragment = u.Path[:i], "", ""
	return u.String(), true
}

// Reasons a service could not be reached (UnreachableError.Reason).
const (
	ReasonRefused = "refused"
	ReasonDNS     = "dns"
	ReasonTimeout = "timeout"
	ReasonOther   = "other"
)

// UnreachableError is a request that got no answer at all: nothing listening, a host name that
// does not resolve, a time-out, a TLS failure.
type UnreachableError struct {
	BaseURL string
	Reason  string // ReasonRefused, ReasonDNS, ReasonTimeout or ReasonOther
	What    string // what happened, in words
	Err     error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach kiln at %s: %s", e.BaseURL, e.What)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// unreachable describes the error of a request that got no answer; an ended ctx stays itself.
func (c *Client) unreachable(ctx context.Context, method, path string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s %s: %w", method, path, ctx.Err())
	}
	e := &UnreachableError{BaseURL: c.baseURL, Reason: ReasonOther, Err: err}
	var dns *net.DNSError
	var op *net.OpError
	var ne net.Error
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		e.Reason, e.What = ReasonDNS, fmt.Sprintf("no such host %s (DNS)", dns.Name)
	case errors.As(err, &dns):
		e.Reason, e.What = ReasonDNS, fmt.Sprintf("the DNS lookup of %s failed: %s", dns.Name, dns.Err)
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Reason, e.What = ReasonRefused, "connection refused"
	case errors.As(err, &ne) && ne.Timeout() && errors.As(err, &op) && op.Op == "dial":
		e.Reason, e.What = ReasonTimeout, "timed out connecting"
	case errors.As(err, &ne) && ne.Timeout():
		e.Reason, e.What = ReasonTimeout, "connected, but timed out waiting for an answer"
	default:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		e.What = err.Error()
	}
	return e
}

// answerError is the error of an API answer with status >= 300: the API's envelope as an
// *APIError; without one, a 429 or 5xx (a proxy's answer while the service is down) is still an
// *APIError, anything else is a *NotAPIError.
func (c *Client) answerError(method, path string, resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	ae, envelope := apiError(resp, raw)
	if envelope || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		return ae
	}
	return &NotAPIError{BaseURL: c.baseURL, Method: method, Path: path, Status: resp.StatusCode, WebPage: webPage(resp.Header, raw)}
}

// webPage reports whether an answer is HTML: by its Content-Type, or by its first character.
func webPage(h http.Header, head []byte) bool {
	if mt, _, err := mime.ParseMediaType(h.Get("Content-Type")); err == nil && (mt == "text/html" || mt == "application/xhtml+xml") {
		return true
	}
	return bytes.HasPrefix(bytes.TrimSpace(head), []byte("<"))
}
