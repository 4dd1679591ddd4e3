package outbound

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/tcptest"
)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// server starts a loopback HTTP server counting its requests.
func server(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func ok(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }

func TestClientRefusesLoopback(t *testing.T) {
	srv, hits := server(t, ok)
	u, _ := url.Parse(srv.URL)
	for _, target := range []string{srv.URL, "http://localhost:" + u.Port()} {
		resp, err := NewClient(Config{}).Get(target)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("GET %s succeeded: %s", target, resp.Status)
		}
		var be *BlockedError
		if !errors.As(err, &be) {
			t.Fatalf("GET %s: %v, want a *BlockedError", target, err)
		}
		if !be.Addr.IsLoopback() {
			t.Errorf("blocked address %s, want a loopback one", be.Addr)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("the server got %d requests", hits.Load())
	}
}

func TestClientAllowsAllowedRange(t *testing.T) {
	srv, hits := server(t, ok)
	resp, err := NewClient(Config{Allow: loopback}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || hits.Load() != 1 {
		t.Errorf("status %d, %d requests; want 204 and 1", resp.StatusCode, hits.Load())
	}
}

func TestClientDoesNotFollowRedirects(t *testing.T) {
	target, hits := server(t, ok)
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/elsewhere", http.StatusFound)
	})
	resp, err := NewClient(Config{Allow: loopback}).Post(srv.URL, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Errorf("status %d, want 302 returned as is", resp.StatusCode)
	}
	if hits.Load() != 0 {
		t.Errorf("the redirect target got %d requests", hits.Load())
	}
}

func TestDialer(t *testing.T) {
	addr := tcptest.Serve(t, func(c net.Conn) { c.Close() })
	_, err := Dialer(Config{}).Dial("tcp", addr)
	var be *BlockedError
	if !errors.As(err, &be) || be.Addr != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("Dial: %v, want *BlockedError for 127.0.0.1", err)
	}
	c, err := Dialer(Config{Allow: loopback}).Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if d := Dialer(Config{ConnectTimeout: 3 * time.Second}); d.Timeout != 3*time.Second {
		t.Errorf("connect timeout %v", d.Timeout)
	}
}

func TestClientSettings(t *testing.T) {
	c := NewClient(Config{HeaderTimeout: 7 * time.Second})
	tr := c.Transport.(*http.Transport)
	if tr.Proxy != nil {
		t.Error("the transport takes a proxy (from the environment?)")
	}
	if tr.ResponseHeaderTimeout != 7*time.Second {
		t.Errorf("header timeout %v", tr.ResponseHeaderTimeout)
	}
	if NewClient(Config{}).Transport.(*http.Transport).ResponseHeaderTimeout != DefaultHeaderTimeout {
		t.Error("no default header timeout")
	}
}
