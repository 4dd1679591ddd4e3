// Package fakekiln is a stand-in kiln API for the client's tests: one organization, one token,
// builds whose log and status a test writes. Its live events at /socket.io/ are kiln serve's own
// (live.Service and livesocket.Server, fed as the lifecycle and the log writer feed them); its
// JSON log pages long-poll as GET /builds/:id/logs?format=json does. A test can cut the sockets
// as a network would, or refuse /socket.io/ as a server without live events does.
package fakekiln

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/live"
	"github.com/kilnbuild/kiln/shared/livesocket"
)

// Token is the API token the server takes; OrgID its organization.
const (
	Token = "kiln_good"
	OrgID = "org_1"
)

// Server is a running stand-in.
type Server struct {
	URL     string
	Client  *http.Client
	Live    *live.Service
	Sockets *livesocket.Server

	mu      sync.Mutex
	builds  map[string]*build
	changed chan struct{} // closed and replaced at every change
	conns   []net.Conn    // the sockets' connections, as hijacked
	opens   int
	refuse  bool
	revoked bool
	counts  map[string]int
}

type build struct {
	b     kiln.Build
	lines []buildlog.Line
}

// New starts a server; pings (zero: kiln serve's) are its Engine.IO ping interval and timeout.
// It stops when the test ends.
func New(t testing.TB, pings live.Pings) *Server { return start(t, pings, false) }

// NewTLS starts a server over HTTPS that also speaks HTTP/2, as a CDN in front of kiln does;
// Client trusts it.
func NewTLS(t testing.TB, pings live.Pings) *Server { return start(t, pings, true) }

func start(t testing.TB, pings live.Pings, secure bool) *Server {
	t.Helper()
	s := &Server{builds: map[string]*build{}, changed: make(chan struct{}), counts: map[string]int{}}
	s.Live = &live.Service{Registry: live.NewMemory(), Auth: s, Builds: s, Logs: s}
	s.Sockets = livesocket.New(s.Live, nil)
	if pings.Interval > 0 {
		s.Sockets.Pings, s.Live.Pings = pings, pings
	}
	hs := httptest.NewUnstartedServer(http.HandlerFunc(s.serveHTTP))
	if secure {
		hs.EnableHTTP2 = true
		hs.StartTLS()
	} else {
		hs.Start()
	}
	s.URL, s.Client = hs.URL, hs.Client()
	t.Cleanup(func() { s.Sockets.Shutdown(); hs.Close() })
	return s
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	refuse := s.refuse
	key := r.URL.Path
	if strings.HasSuffix(key, "/logs") {
		key = "logs"
	}
	if strings.HasPrefix(key, "/socket.io/") {
		key = "socket.io"
	}
	s.counts[key]++
	s.mu.Unlock()
	switch {
	case strings.HasPrefix(r.URL.Path, "/socket.io/") && !refuse:
		s.Sockets.ServeHTTP(&hijackRecorder{ResponseWriter: w, s: s}, r)
	case strings.HasPrefix(r.URL.Path, "/builds/") && r.Header.Get("Authorization") != "Bearer "+Token:
		writeError(w, http.StatusUnauthorized, kiln.EInvalidToken, "the bearer token is missing, malformed, unknown, expired or revoked")
	case strings.HasPrefix(r.URL.Path, "/builds/") && strings.HasSuffix(r.URL.Path, "/logs"):
		s.logPage(w, r, strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/builds/"), "/logs"))
	default:
		writeError(w, http.StatusNotFound, kiln.ENotFound, "no such route")
	}
}

// Requests is how many requests came for the JSON log pages ("logs"), the sockets
// ("socket.io"), or another path.
func (s *Server) Requests(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[key]
}

// RefuseSockets answers /socket.io/ with 404 from now on, as a server without live events.
func (s *Server) RefuseSockets() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = true
}

// Drop cuts every socket's connection without a goodbye.
func (s *Server) Drop() {
	s.mu.Lock()
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// SocketsOpened is how many sockets were opened so far.
func (s *Server) SocketsOpened() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opens
}

// AddBuild adds a running build.
func (s *Server) AddBuild(id string) {
	s.mu.Lock()
	now := time.Now()
	s.builds[id] = &build{b: kiln.Build{ID: id, OrganizationID: OrgID, Status: kiln.StatusRunning, Number: 7, ProjectID: "p", BuildSettingID: "s", StartedAt: &now}}
	s.mu.Unlock()
}

// Write appends lines to a build's log and sends them, as the publishing log writer does.
func (s *Server) Write(buildID string, level kiln.LogLevel, msgs ...string) {
	s.mu.Lock()
	bd := s.builds[buildID]
	first := int64(len(bd.lines)) + 1
	var out []kiln.LogLine
	for i, m := range msgs {
		l := kiln.LogLine{Time: time.Now(), Level: level, Message: m}
		bd.lines = append(bd.lines, buildlog.Line{Seq: first + int64(i), LogLine: l})
		out = append(out, l)
	}
	s.changedLocked()
	s.mu.Unlock()
	s.Live.LinesWritten(context.Background(), OrgID, buildID, first, out)
}

// SetStatus changes a build's status, as the lifecycle does (a failure with the reason).
func (s *Server) SetStatus(buildID string, st kiln.BuildStatus, reason string) {
	s.mu.Lock()
	bd := s.builds[buildID]
	bd.b.Status, bd.b.FailureReason = st, reason
	if st.Terminal() {
		at := time.Now()
		bd.b.FinishedAt = &at
	}
	b := bd.b
	s.changedLocked()
	s.mu.Unlock()
	s.Live.BuildChanged(context.Background(), st, &b)
}

func (s *Server) changedLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Revoke revokes Token: its sockets are disconnected, and it connects no more.
func (s *Server) Revoke(ctx context.Context) error {
	s.mu.Lock()
	s.revoked = true
	s.mu.Unlock()
	return s.Live.Recheck(ctx, OrgID)
}

// Resolve takes Token alone (until it is revoked), as a viewer of OrgID.
func (s *Server) Resolve(_ context.Context, secret string) (*auth.Principal, error) {
	s.mu.Lock()
	revoked := s.revoked
	s.mu.Unlock()
	if secret != Token || revoked {
		return nil, kiln.Errorf(kiln.EInvalidToken, "the bearer token is missing, malformed, unknown, expired or revoked")
	}
	return &auth.Principal{Organization: &kiln.Organization{ID: OrgID, Plan: kiln.PlanPro},
		Member: &kiln.Member{OrganizationID: OrgID, User: kiln.User{ID: "u_1"}, Role: kiln.RoleViewer}}, nil
}

func (s *Server) ResolveHash(ctx context.Context, _ string, _ bool) (*auth.Principal, error) {
	return s.Resolve(ctx, Token)
}

func (s *Server) GetBuild(_ context.Context, org, id string) (*kiln.Build, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	bd := s.builds[id]
	if org != OrgID || bd == nil {
		return nil, kiln.Errorf(kiln.ENotFound, "build not found")
	}
	b := bd.b
	return &b, nil
}

func (s *Server) Read(_ context.Context, _, id string, from int64, max int) ([]buildlog.Line, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []buildlog.Line
	if bd := s.builds[id]; bd != nil {
		for _, l := range bd.lines {
			if l.Seq >= from && len(out) < max {
				out = append(out, l)
			}
		}
	}
	return out, nil
}

func (s *Server) Last(_ context.Context, _, id string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if bd := s.builds[id]; bd != nil {
		return int64(len(bd.lines)), nil
	}
	return 0, nil
}

// hijackRecorder keeps the connection a WebSocket upgrade takes over, so Drop can cut it.
type hijackRecorder struct {
	http.ResponseWriter
	s *Server
}

func (h *hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err == nil {
		h.s.mu.Lock()
		h.s.conns = append(h.s.conns, c)
		h.s.opens++
		h.s.mu.Unlock()
	}
	return c, rw, err
}
