package client

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/client/fakekiln"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/live"
)

var followed = strings.Repeat("f", kiln.IDLength)

// following runs Follow in the background; seen signals each line's seq as it is visited.
type following struct {
	mu     sync.Mutex
	lines  []string
	seen   chan int64
	done   chan struct{}
	status string
	err    error
}

func follow(t *testing.T, s *fakekiln.Server) *following {
	t.Helper()
	c, err := New(s.URL, fakekiln.Token, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.retryBase = 10 * time.Millisecond
	f := &following{seen: make(chan int64, 100), done: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	go func() {
		defer close(f.done)
		defer cancel()
		f.status, f.err = c.Follow(ctx, followed, func(l LogLine) error {
			f.mu.Lock()
			f.lines = append(f.lines, fmt.Sprintf("%d %s %s", l.Seq, l.Level, l.Message))
			f.mu.Unlock()
			f.seen <- l.Seq
			return nil
		})
	}()
	return f
}

// upTo waits until line seq was visited.
func (f *following) upTo(t *testing.T, seq int64) {
	t.Helper()
	for {
		select {
		case s := <-f.seen:
			if s >= seq {
				return
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("line %d was not visited", seq)
		}
	}
}

func (f *following) end(t *testing.T) []string {
	t.Helper()
	select {
	case <-f.done:
	case <-time.After(40 * time.Second):
		t.Fatal("Follow did not end")
	}
	return f.lines
}

func numbered(level string, from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("%d %s line %d", i, level, i))
	}
	return out
}

func writeLines(s *fakekiln.Server, from, to int) {
	var msgs []string
	for i := from; i <= to; i++ {
		msgs = append(msgs, fmt.Sprint("line ", i))
	}
	s.Write(followed, kiln.LevelInfo, msgs...)
}

// TestFollow: over the socket (no log page asked for), over the log pages when /socket.io/ is
// refused, and over the log pages from where the socket left off when it is lost for good
// midway, Follow visits the same lines once each, in order, and ends with the build.
func TestFollow(t *testing.T) {
	for _, tt := range []struct {
		name string
		// before runs before Follow, midway after line 3 was visited.
		before, midway func(s *fakekiln.Server)
		socket, pages  bool
	}{
		{name: "socket", socket: true},
		{name: "socket refused", before: (*fakekiln.Server).RefuseSockets, pages: true},
		{name: "socket lost midway", midway: func(s *fakekiln.Server) { s.RefuseSockets(); s.Drop() }, socket: true, pages: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := fakekiln.New(t, live.Pings{})
			s.AddBuild(followed)
			writeLines(s, 1, 3)
			if tt.before != nil {
				tt.before(s)
			}
			f := follow(t, s)
			f.upTo(t, 3)
			if tt.midway != nil {
				tt.midway(s)
			}
			writeLines(s, 4, 6)
			f.upTo(t, 6)
			writeLines(s, 7, 8)
			s.SetStatus(followed, kiln.StatusComplete, "")
			got := f.end(t)
			if f.err != nil || f.status != "complete" {
				t.Fatalf("Follow: status %q, %v", f.status, f.err)
			}
			if want := numbered("info", 1, 8); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("lines\n%q\nwant\n%q", got, want)
			}
			if socket, pages := s.Requests("socket.io") > 0 && s.SocketsOpened() > 0, s.Requests("logs") > 0; socket != tt.socket || pages != tt.pages {
				t.Fatalf("socket used %v (want %v), log pages asked for %v (want %v)", socket, tt.socket, pages, tt.pages)
			}
		})
	}
}

// TestFollowWaitsForTheEndLine: a failed build's line saying why it ended, written just after
// its status changed, is visited before Follow ends, over the socket as over the log pages.
func TestFollowWaitsForTheEndLine(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		t.Run(fmt.Sprint("refused ", refuse), func(t *testing.T) {
			s := fakekiln.New(t, live.Pings{})
			s.AddBuild(followed)
			if refuse {
				s.RefuseSockets()
			}
			writeLines(s, 1, 2)
			f := follow(t, s)
			f.upTo(t, 2)
			s.SetStatus(followed, kiln.StatusFailed, "cook failed")
			time.Sleep(200 * time.Millisecond)
			s.Write(followed, kiln.LevelError, "kiln: build failed: cook failed")
			got := f.end(t)
			want := append(numbered("info", 1, 2), "3 error kiln: build failed: cook failed")
			if f.err != nil || f.status != "failed" || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("Follow: status %q, %v, lines %q", f.status, f.err, got)
			}
		})
	}
}

// TestFollowUnknownBuild: the socket's refusal gives way to the API's own 404.
func TestFollowUnknownBuild(t *testing.T) {
	s := fakekiln.New(t, live.Pings{})
	c, err := New(s.URL, fakekiln.Token, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Follow(context.Background(), followed, func(LogLine) error { return nil })
	if !isStatus(err, 404) {
		t.Fatalf("Follow of an unknown build: %v", err)
	}
}
