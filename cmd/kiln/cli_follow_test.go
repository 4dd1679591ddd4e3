package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// TestCLIFollowLive: builds logs --follow of a build that fails prints the same lines, and exits
// the same way, over the live events as by long-polling when /socket.io/ is refused (a server
// from before live events): the whole log once, the line saying why it failed last, exit 1 with
// the failure reason. Over the socket it asks for no log page.
func TestCLIFollowLive(t *testing.T) {
	w := newCLIWorld(t)
	for _, refuse := range []bool{false, true} {
		name := map[bool]string{false: "socket", true: "socket refused"}[refuse]
		t.Run(name, func(t *testing.T) {
			front := newCountingProxy(t, w.svc.URL(), refuse)
			env := func(k string) string {
				if k == "KILN_URL" {
					return front.srv.URL
				}
				return w.env(k)
			}
			out, _, code, err := runKiln(t, w.env, "builds", "trigger", w.project, w.settings["broken"], "--json")
			if code != 0 {
				t.Fatalf("trigger: exit %d (%v)", code, err)
			}
			var trig struct{ BuildID string }
			if err := json.Unmarshal([]byte(out), &trig); err != nil || trig.BuildID == "" {
				t.Fatalf("trigger --json printed %q (%v)", out, err)
			}
			followed, _, code, ferr := runKiln(t, env, "builds", "logs", "--follow", trig.BuildID)
			if code != 1 || ferr == nil || !strings.Contains(ferr.Error(), "engine step failed") {
				t.Fatalf("logs --follow of a failing build: exit %d, error %v; want 1 with the failure reason", code, ferr)
			}
			whole, _, code, err := runKiln(t, w.env, "builds", "logs", trig.BuildID)
			if code != 0 {
				t.Fatalf("logs: exit %d (%v)", code, err)
			}
			if followed != whole {
				t.Fatalf("logs --follow printed %d bytes, the whole log is %d:\n%s", len(followed), len(whole), followed)
			}
			if lines := strings.Split(strings.TrimSpace(followed), "\n"); !strings.HasPrefix(lines[len(lines)-1], "kiln: build failed: ") {
				t.Errorf("the last line followed is %q, not the line saying why the build failed", lines[len(lines)-1])
			}
			sockets, pages := front.count()
			if refuse && (sockets != 1 || pages == 0) || !refuse && (sockets != 1 || pages != 0) {
				t.Errorf("%d socket upgrades asked for and %d log pages; want 1 and %s", sockets, pages, map[bool]string{false: "none", true: "some"}[refuse])
			}
		})
	}
}

// countingProxy passes requests to the service, counting the socket upgrades and JSON log pages
// asked for; with refuse it answers /socket.io/ 404, as a server from before live events.
type countingProxy struct {
	srv    *httptest.Server
	mu     sync.Mutex
	socket int
	pages  int
}

func newCountingProxy(t *testing.T, target string, refuse bool) *countingProxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	p := &countingProxy{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		if strings.HasPrefix(r.URL.Path, "/socket.io/") {
			p.socket++
		}
		if strings.HasSuffix(r.URL.Path, "/logs") && r.URL.Query().Get("format") == "json" {
			p.pages++
		}
		p.mu.Unlock()
		if refuse && strings.HasPrefix(r.URL.Path, "/socket.io/") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"not_found","message":"no such route","requestId":"req_old"}`))
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *countingProxy) count() (sockets, pages int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.socket, p.pages
}
