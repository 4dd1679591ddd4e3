package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/tcptest"
)

// TestNotAPIAnswers: answers that are not kiln's API (another service's 404, the console's web
// page, at any status) are *NotAPIError, said in words; a proxy's 5xx or 429 stays an *APIError.
func TestNotAPIAnswers(t *testing.T) {
	tests := []struct {
		name, path, contentType, body string
		status                        int
		want                          string // the error's text; "" for an *APIError
	}{
		{"another service's 404", "", "text/plain; charset=utf-8", "404 page not found\n", 404,
			`%s does not answer like a kiln API (GET /builds/b: HTTP 404 Not Found, without kiln's JSON error envelope {"error", "message", "requestId"})`},
		{"JSON without the envelope", "", "application/json", `{"message":"Not Found"}`, 404,
			`%s does not answer like a kiln API (GET /builds/b: HTTP 404 Not Found, without kiln's JSON error envelope {"error", "message", "requestId"})`},
		{"the console's page", "/console/", "text/html; charset=utf-8", "<!doctype html><html></html>", 200,
			"%s answered with a web page, not kiln's API (GET /builds/b: HTTP 200 OK): use the service's base URL %s (without /console/)"},
		{"a web page without a content type", "/app", "", "\n  <html></html>", 200,
			"%s answered with a web page, not kiln's API (GET /builds/b: HTTP 200 OK): use the service's base URL"},
		{"a web page's 404", "/console/builds", "text/html", "<html>no</html>", 404,
			"%s answered with a web page, not kiln's API (GET /builds/b: HTTP 404 Not Found): use the service's base URL %s (without /console/)"},
		{"a proxy's 502 page", "", "text/html", "<html>bad gateway</html>", 502, ""},
		{"a proxy's 429", "", "text/plain", "slow down", 429, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.contentType != "" {
					w.Header().Set("Content-Type", tt.contentType)
				}
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			c, err := New(srv.URL+tt.path, "kiln_t", nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.GetBuild(context.Background(), "b")
			if tt.want == "" {
				var ae *APIError
				if !errors.As(err, &ae) || ae.Status != tt.status {
					t.Fatalf("err = %v, want an *APIError with status %d", err, tt.status)
				}
				return
			}
			var na *NotAPIError
			if !errors.As(err, &na) {
				t.Fatalf("err = %v (%T), want a *NotAPIError", err, err)
			}
			base := c.BaseURL()
			want := fmtWant(tt.want, base, srv.URL)
			if err.Error() != want {
				t.Errorf("error:\n got %s\nwant %s", err, want)
			}
			if passing(context.Background(), err) {
				t.Error("following a log would wait out an answer that is not kiln's API")
			}
		})
	}
}

// fmtWant fills want's first %s with base and a second one with root.
func fmtWant(want, base, root string) string {
	args := []any{base}
	if strings.Count(want, "%s") > 1 {
		args = append(args, root)
	}
	return fmt.Sprintf(want, args...)
}

// TestUnreachable: a request without an answer says so plainly, by its reason.
func TestUnreachable(t *testing.T) {
	closed := "http://" + tcptest.ClosedAddr(t)
	silent := tcptest.Serve(t, nil) // accepts, never answers

	tests := []struct {
		name, url, reason, want string
		timeout                 time.Duration
	}{
		{"nothing listening", closed, ReasonRefused, "cannot reach kiln at " + closed + ": connection refused", 0},
		{"no answer", "http://" + silent, ReasonTimeout,
			"cannot reach kiln at http://" + silent + ": connected, but timed out waiting for an answer", 200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hc *http.Client
			if tt.timeout > 0 {
				tr := http.DefaultTransport.(*http.Transport).Clone()
				tr.ResponseHeaderTimeout = tt.timeout
				hc = &http.Client{Transport: tr}
			}
			c, err := New(tt.url, "kiln_t", hc)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.GetBuild(context.Background(), "b")
			var ue *UnreachableError
			if !errors.As(err, &ue) || ue.Reason != tt.reason || err.Error() != tt.want {
				t.Fatalf("err = %v (%T), want %q (reason %s)", err, err, tt.want, tt.reason)
			}
		})
	}

	t.Run("DNS", func(t *testing.T) {
		c, err := New("http://kiln-test.invalid", "kiln_t", nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.GetBuild(context.Background(), "b")
		var ue *UnreachableError
		if !errors.As(err, &ue) || ue.Reason != ReasonDNS {
			t.Fatalf("err = %v (%T), want an *UnreachableError for DNS", err, err)
		}
		// Without a resolver here the lookup fails rather than finding no such host.
		if err.Error() != "cannot reach kiln at http://kiln-test.invalid: no such host kiln-test.invalid (DNS)" &&
			!strings.HasPrefix(err.Error(), "cannot reach kiln at http://kiln-test.invalid: the DNS lookup of kiln-test.invalid failed: ") {
			t.Errorf("error %q", err)
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		c, _ := New(closed, "kiln_t", nil)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := c.GetBuild(ctx, "b")
		var ue *UnreachableError
		if errors.As(err, &ue) || !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want the context's error", err)
		}
	})
}
