package liveclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/client/fakekiln"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/live"
)

var buildID = strings.Repeat("b", kiln.IDLength)

const goodToken = fakekiln.Token

// newServer is a stand-in kiln with one running build.
func newServer(t *testing.T, pings live.Pings) *fakekiln.Server {
	s := fakekiln.New(t, pings)
	s.AddBuild(buildID)
	return s
}

func write(s *fakekiln.Server, msgs ...string) { s.Write(buildID, kiln.LevelInfo, msgs...) }

// fast reconnects quickly, for tests.
var fast = Options{RetryDelay: 20 * time.Millisecond, MaxRetryDelay: 100 * time.Millisecond, Retries: 20, Logger: slog.New(slog.DiscardHandler)}

func dial(t *testing.T, s *fakekiln.Server, token string) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, s.URL, token, fast)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// collect takes events until one matches until, and returns the lines' seqs and the statuses.
func collect(t *testing.T, c *Client, until func(Event) bool) (seqs []int64, statuses []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for {
		e, err := c.Next(ctx)
		if err != nil {
			t.Fatalf("Next after lines %v and statuses %v: %v", seqs, statuses, err)
		}
		switch {
		case e.Log != nil:
			if e.Log.BuildID != buildID || e.Log.Level != "info" || !strings.HasSuffix(e.Log.Timestamp, "Z") || e.Log.Message != fmt.Sprint("line ", e.Log.Seq) {
				t.Fatalf("line %+v", *e.Log)
			}
			seqs = append(seqs, e.Log.Seq)
		case e.Status != nil:
			statuses = append(statuses, e.Status.Status)
		}
		if until(e) {
			return seqs, statuses
		}
	}
}

func lines(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprint("line ", i))
	}
	return out
}

func isStatus(s string) func(Event) bool {
	return func(e Event) bool { return e.Status != nil && e.Status.Status == s }
}

func isLine(seq int64) func(Event) bool {
	return func(e Event) bool { return e.Log != nil && e.Log.Seq == seq }
}

// TestJoinReplaysThenStreams: a join from seq 0 replays the log, then the status, then every
// line and change as it comes, in order.
func TestJoinReplaysThenStreams(t *testing.T) {
	s := newServer(t, live.Pings{})
	write(s, lines(1, 3)...)
	c := dial(t, s, goodToken)
	if err := c.Join(context.Background(), buildID, 0); err != nil {
		t.Fatalf("Join: %v", err)
	}
	seqs, statuses := collect(t, c, isStatus("running"))
	if fmt.Sprint(seqs, statuses) != "[1 2 3] [running]" {
		t.Fatalf("at join: lines %v, statuses %v", seqs, statuses)
	}
	write(s, lines(4, 5)...)
	s.SetStatus(buildID, kiln.StatusComplete, "")
	seqs, statuses = collect(t, c, isStatus("complete"))
	if fmt.Sprint(seqs, statuses) != "[4 5] [complete]" {
		t.Fatalf("after join: lines %v, statuses %v", seqs, statuses)
	}
}

// TestJoinFromSeq: fromSeq replays only the lines after it; NoReplay none written before.
func TestJoinFromSeq(t *testing.T) {
	s := newServer(t, live.Pings{})
	write(s, lines(1, 4)...)
	c := dial(t, s, goodToken)
	if err := c.Join(context.Background(), buildID, 2); err != nil {
		t.Fatal(err)
	}
	if seqs, _ := collect(t, c, isStatus("running")); fmt.Sprint(seqs) != "[3 4]" {
		t.Fatalf("from seq 2: lines %v", seqs)
	}
	d := dial(t, s, goodToken)
	if err := d.Join(context.Background(), buildID, NoReplay); err != nil {
		t.Fatal(err)
	}
	if seqs, _ := collect(t, d, isStatus("running")); len(seqs) != 0 {
		t.Fatalf("without replay: lines %v before the status", seqs)
	}
	write(s, lines(5, 5)...)
	if seqs, _ := collect(t, d, isLine(5)); fmt.Sprint(seqs) != "[5]" {
		t.Fatalf("without replay, then a line: %v", seqs)
	}
}

// TestReconnectLosesNothing: connections cut mid-build are dialled again and the build joined
// again from the last line delivered: lines written while disconnected come once, in order.
func TestReconnectLosesNothing(t *testing.T) {
	s := newServer(t, live.Pings{})
	write(s, lines(1, 3)...)
	c := dial(t, s, goodToken)
	if err := c.Join(context.Background(), buildID, 0); err != nil {
		t.Fatal(err)
	}
	var all []int64
	seqs, _ := collect(t, c, isStatus("running"))
	all = append(all, seqs...)
	for round := 0; round < 3; round++ {
		s.Drop()
		write(s, lines(4+3*round, 6+3*round)...) // while disconnected, or as it reconnects
		seqs, _ = collect(t, c, isLine(int64(6+3*round)))
		all = append(all, seqs...)
	}
	write(s, lines(13, 14)...)
	s.SetStatus(buildID, kiln.StatusComplete, "")
	seqs, statuses := collect(t, c, isStatus("complete"))
	all = append(all, seqs...)
	if fmt.Sprint(all) != fmt.Sprint(seqOf(1, 14)) || fmt.Sprint(statuses) != "[complete]" {
		t.Fatalf("lines %v (want 1 to 14 once each), statuses %v (an unchanged status is not repeated)", all, statuses)
	}
	if n := s.SocketsOpened(); n < 2 {
		t.Fatalf("%d sockets opened; the drops did not reconnect", n)
	}
}

func seqOf(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// TestPongs: the client answers the server's pings, so a quiet socket stays open well past
// the ping interval and timeout.
func TestPongs(t *testing.T) {
	// A socket that does not answer is closed a timeout after the ping: 1.1 s at most here
	// (generous: a loaded machine delays pongs), well within the 2 s the test waits.
	s := newServer(t, live.Pings{Interval: 100 * time.Millisecond, Timeout: time.Second})
	c := dial(t, s, goodToken)
	if err := c.Join(context.Background(), buildID, 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	write(s, lines(1, 1)...)
	collect(t, c, isLine(1))
	if n := s.SocketsOpened(); n != 1 {
		t.Fatalf("%d sockets opened in 2 s of pings every 100 ms: the pongs did not keep it", n)
	}
}

// TestRefusals: a wrong token is a ConnectError with the server's message, a server without
// live events a HandshakeError, a build of another organization a RefusedError.
func TestRefusals(t *testing.T) {
	s := newServer(t, live.Pings{})
	ctx := context.Background()
	_, err := Dial(ctx, s.URL, "kiln_wrong", fast)
	var ce *ConnectError
	if !errors.As(err, &ce) || ce.Code != "invalid_token" || !strings.HasPrefix(ce.Message, "invalid_token: ") {
		t.Fatalf("wrong token: %v", err)
	}
	old := httptest.NewServer(http.NotFoundHandler())
	defer old.Close()
	_, err = Dial(ctx, old.URL, goodToken, fast)
	var he *HandshakeError
	if !errors.As(err, &he) || he.StatusCode != 404 {
		t.Fatalf("a server without /socket.io/: %v", err)
	}
	c := dial(t, s, goodToken)
	err = c.Join(ctx, strings.Repeat("x", kiln.IDLength), 0)
	var re *RefusedError
	if !errors.As(err, &re) || re.Code != "not_found" {
		t.Fatalf("join of an unknown build: %v", err)
	}
}

// TestClose: Close disconnects; Next then answers ErrClosed and no reconnect follows.
func TestClose(t *testing.T) {
	s := newServer(t, live.Pings{})
	c := dial(t, s, goodToken)
	if err := c.Join(context.Background(), buildID, 0); err != nil {
		t.Fatal(err)
	}
	collect(t, c, isStatus("running"))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Next(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after Close: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.Sockets.Len() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := s.Sockets.Len(); n != 0 || s.SocketsOpened() != 1 {
		t.Fatalf("after Close the server holds %d sockets, %d were opened", n, s.SocketsOpened())
	}
}

func TestSocketURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:8080":     "ws://localhost:8080/socket.io/?EIO=4&transport=websocket",
		"https://kiln.example.com/": "wss://kiln.example.com/socket.io/?EIO=4&transport=websocket",
		"https://example.com/kiln":  "wss://example.com/kiln/socket.io/?EIO=4&transport=websocket",
	} {
		if got, err := SocketURL(in); err != nil || got != want {
			t.Errorf("SocketURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := SocketURL("ftp://x"); err == nil {
		t.Error("SocketURL(ftp://x) is not an error")
	}
}

// TestServerDisconnect: a socket the server disconnects (its token revoked) ends with
// ErrServerDisconnect, after the events before it, and does not connect again.
func TestServerDisconnect(t *testing.T) {
	s := newServer(t, live.Pings{})
	c := dial(t, s, goodToken)
	if err := c.Join(context.Background(), buildID, 0); err != nil {
		t.Fatal(err)
	}
	collect(t, c, isStatus("running"))
	write(s, lines(1, 1)...)
	collect(t, c, isLine(1))
	if err := s.Revoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Next(ctx); !errors.Is(err, ErrServerDisconnect) {
		t.Fatalf("Next after the token was revoked: %v", err)
	}
	if n := s.SocketsOpened(); n != 1 {
		t.Fatalf("%d sockets opened: the client connected again after the server disconnected it", n)
	}
}

// TestHTTPS: over HTTPS to a server that offers HTTP/2 (a CDN's answer), the upgrade is asked
// over HTTP/1.1, where WebSockets live.
func TestHTTPS(t *testing.T) {
	s := fakekiln.NewTLS(t, live.Pings{})
	s.AddBuild(buildID)
	write(s, lines(1, 2)...)
	opts := fast
	opts.HTTPClient = s.Client
	c, err := Dial(context.Background(), s.URL, goodToken, opts)
	if err != nil {
		t.Fatalf("Dial over HTTPS: %v", err)
	}
	defer c.Close()
	if err := c.Join(context.Background(), buildID, 0); err != nil {
		t.Fatal(err)
	}
	if seqs, _ := collect(t, c, isStatus("running")); fmt.Sprint(seqs) != "[1 2]" {
		t.Fatalf("lines %v", seqs)
	}
}
