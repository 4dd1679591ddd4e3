package console

import (
	"bufio"
	"context"
	"fmt"
	gonet "net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// cuttingProxy passes requests and sockets to the service; cut drops the sockets' connections
// as a network would.
type cuttingProxy struct {
	srv    *httptest.Server
	mu     sync.Mutex
	conns  []gonet.Conn
	refuse bool
}

func newCuttingProxy(t *testing.T, target string) *cuttingProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	p := &cuttingProxy{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		refuse := p.refuse
		p.mu.Unlock()
		if refuse && strings.HasPrefix(r.URL.Path, "/socket.io/") {
			http.Error(w, "no sockets here any more", http.StatusServiceUnavailable)
			return
		}
		rp.ServeHTTP(&hijackKeeper{ResponseWriter: w, p: p}, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// refuseSockets answers the sockets' upgrades 503 from now on.
func (p *cuttingProxy) refuseSockets() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = true
}

// cut drops every socket's connection and answers how many there were.
func (p *cuttingProxy) cut() int {
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
	return len(conns)
}

type hijackKeeper struct {
	http.ResponseWriter
	p *cuttingProxy
}

func (h *hijackKeeper) Unwrap() http.ResponseWriter { return h.ResponseWriter }

func (h *hijackKeeper) Hijack() (gonet.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err == nil {
		h.p.mu.Lock()
		h.p.conns = append(h.p.conns, c)
		h.p.mu.Unlock()
	}
	return c, rw, err
}

// refusingSockets is a proxy to the service that answers /socket.io/ as a server without live
// events does; it answers its address.
func refusingSockets(t *testing.T, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/socket.io/") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":"not_found","message":"no such route","requestId":"req_old"}`)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// tabNetwork is what the page's tab opened and sent: requests, sockets, and their frames.
type tabNetwork struct {
	mu       sync.Mutex
	urls     []string
	opened   []string
	out, got []string
}

func watchNetwork(t *testing.T, ctx context.Context) *tabNetwork {
	t.Helper()
	n := &tabNetwork{}
	if err := chromedp.Listen(ctx, func(ev any) {
		n.mu.Lock()
		defer n.mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			n.urls = append(n.urls, ev.Request.URL)
		case *network.EventWebSocketCreated:
			n.opened = append(n.opened, ev.URL)
		case *network.EventWebSocketFrameSent:
			n.out = append(n.out, string(ev.Response.PayloadData))
		case *network.EventWebSocketFrameReceived:
			n.got = append(n.got, string(ev.Response.PayloadData))
		}
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

func (n *tabNetwork) sockets() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.opened...)
}

// requests lists the requests whose path starts with path.
func (n *tabNetwork) requests(path string) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, raw := range n.urls {
		if u, err := url.Parse(raw); err == nil && strings.HasPrefix(u.Path, path) {
			out = append(out, raw)
		}
	}
	return out
}

func (n *tabNetwork) frames(received bool) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if received {
		return append([]string(nil), n.got...)
	}
	return append([]string(nil), n.out...)
}

// sent says whether a frame sent holds s; received whether a frame received starts with s.
func (n *tabNetwork) sent(s string) bool {
	for _, f := range n.frames(false) {
		if strings.Contains(f, s) {
			return true
		}
	}
	return false
}

func (n *tabNetwork) received(prefix string) bool {
	for _, f := range n.frames(true) {
		if strings.HasPrefix(f, prefix) {
			return true
		}
	}
	return false
}
