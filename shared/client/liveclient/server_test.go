package liveclient

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

// server is kiln serve's live events (live.Service and livesocket.Server, as kiln serve wires
// them) over one organization with one build, in an httptest server whose sockets a test can
// cut as a network would.
type server struct {
	t       *testing.T
	svc     *live.Service
	sockets *livesocket.Server
	http    *httptest.Server

	mu    sync.Mutex
	build kiln.Build
	lines []buildlog.Line
	conns []net.Conn // the sockets' connections, as hijacked
	opens int        // how many sockets were opened
}

const (
	goodToken = "kiln_good"
	orgID     = "org_1"
)

var buildID = strings.Repeat("b", kiln.IDLength)

func newServer(t *testing.T, pings live.Pings) *server {
	t.Helper()
	s := &server{t: t, build: kiln.Build{ID: buildID, OrganizationID: orgID, Status: kiln.StatusRunning, Number: 7, ProjectID: "p", BuildSettingID: "s"}}
	s.svc = &live.Service{Registry: live.NewMemory(), Auth: s, Builds: s, Logs: s}
	s.sockets = livesocket.New(s.svc, nil)
	if pings.Interval > 0 {
		s.sockets.Pings, s.svc.Pings = pings, pings
	}
	s.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/socket.io/") {
			http.NotFound(w, r)
			return
		}
		s.sockets.ServeHTTP(&hijackRecorder{ResponseWriter: w, s: s}, r)
	}))
	t.Cleanup(func() { s.sockets.Shutdown(); s.http.Close() })
	return s
}

// drop cuts every socket's connection without a goodbye.
func (s *server) drop() {
	s.mu.Lock()
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// opened is how many sockets were opened so far.
func (s *server) opened() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opens
}

// write appends lines to the build's log and sends them, as the publishing log writer does.
func (s *server) write(msgs ...string) {
	s.mu.Lock()
	first := int64(len(s.lines)) + 1
	var out []kiln.LogLine
	for i, m := range msgs {
		l := kiln.LogLine{Time: time.Now(), Level: kiln.LevelInfo, Message: m}
		s.lines = append(s.lines, buildlog.Line{Seq: first + int64(i), LogLine: l})
		out = append(out, l)
	}
	s.mu.Unlock()
	s.svc.LinesWritten(context.Background(), orgID, buildID, first, out)
}

// setStatus changes the build's status, as the lifecycle does.
func (s *server) setStatus(st kiln.BuildStatus) {
	s.mu.Lock()
	s.build.Status = st
	if st.Terminal() {
		at := time.Now()
		s.build.FinishedAt = &at
	}
	b := s.build
	s.mu.Unlock()
	s.svc.BuildChanged(context.Background(), st, &b)
}

func (s *server) Resolve(_ context.Context, secret string) (*auth.Principal, error) {
	if secret != goodToken {
		return nil, kiln.Errorf(kiln.EInvalidToken, "the bearer token is missing, malformed, unknown, expired or revoked")
	}
	return &auth.Principal{Organization: &kiln.Organization{ID: orgID, Plan: kiln.PlanPro},
		Member: &kiln.Member{OrganizationID: orgID, User: kiln.User{ID: "u_1"}, Role: kiln.RoleViewer}}, nil
}

func (s *server) ResolveHash(ctx context.Context, _ string, _ bool) (*auth.Principal, error) {
	return s.Resolve(ctx, goodToken)
}

func (s *server) GetBuild(_ context.Context, org, id string) (*kiln.Build, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if org != orgID || id != s.build.ID {
		return nil, kiln.Errorf(kiln.ENotFound, "build not found")
	}
	b := s.build
	return &b, nil
}

func (s *server) Read(_ context.Context, _, _ string, from int64, max int) ([]buildlog.Line, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []buildlog.Line
	for _, l := range s.lines {
		if l.Seq >= from && len(out) < max {
			out = append(out, l)
		}
	}
	return out, nil
}

func (s *server) Last(context.Context, string, string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(len(s.lines)), nil
}

// hijackRecorder keeps the connection a WebSocket upgrade takes over, so the test can cut it.
type hijackRecorder struct {
	http.ResponseWriter
	s *server
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
