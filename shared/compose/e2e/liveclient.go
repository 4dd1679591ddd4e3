package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/api"
)

// LiveClient is the stock socket.io-client (npm, installed by scripts/install-socketio-client.sh)
// driven by testdata/liveclient.js in a Node process this test starts and stops: Do sends it a
// command, and every event its sockets hear is kept, in order.
type LiveClient struct {
	t     testing.TB
	stdin io.WriteCloser
	mu    sync.Mutex
	got   []LiveEvent
	added chan struct{}
}

// LiveEvent is what a socket heard (see testdata/liveclient.js).
type LiveEvent struct {
	Name    string          `json:"name"`
	Ev      string          `json:"ev"`
	ID      string          `json:"id"`
	Message string          `json:"message"`
	Reason  string          `json:"reason"`
	Op      string          `json:"op"`
	BuildID string          `json:"buildId"`
	Data    json.RawMessage `json:"data"`
	Res     json.RawMessage `json:"res"`
	// At is when the client received it, in Unix milliseconds.
	At int64 `json:"at"`
}

// LogLine is a build:log event's data.
type LogLine = api.LiveLogLine

// Line decodes a build:log event.
func (e LiveEvent) Line(t testing.TB) LogLine {
	t.Helper()
	var l LogLine
	if err := json.Unmarshal(e.Data, &l); err != nil {
		t.Fatalf("build:log %s: %v", e.Data, err)
	}
	return l
}

// Field is a string field of the event's data (or of its acknowledgement's answer).
func (e LiveEvent) Field(name string) string {
	var m map[string]any
	raw := e.Data
	if e.Ev == "ack" {
		raw = e.Res
	}
	_ = json.Unmarshal(raw, &m)
	s, _ := m[name].(string)
	return s
}

// SocketIOClientPath installs the stock client if needed and returns its package.json's path.
func SocketIOClientPath(t testing.TB) string {
	t.Helper()
	out, err := exec.Command(RepoPath("scripts", "install-socketio-client.sh")).Output()
	if err != nil {
		t.Fatalf("scripts/install-socketio-client.sh: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// NewLiveClient starts the client; it is stopped when the test ends.
func NewLiveClient(t testing.TB) *LiveClient {
	t.Helper()
	cmd := exec.Command("node", RepoPath("shared", "compose", "e2e", "testdata", "liveclient.js"), SocketIOClientPath(t))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("node: %v", err)
	}
	c := &LiveClient{t: t, stdin: stdin, added: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 4<<20)
		for sc.Scan() {
			var e LiveEvent
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				continue
			}
			c.mu.Lock()
			c.got = append(c.got, e)
			c.mu.Unlock()
			select {
			case c.added <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		_ = stdin.Close() // the driver exits when its input ends
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
		}
		_ = cmd.Wait()
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("liveclient.js stderr:\n%s", stderr.String())
		}
	})
	return c
}

// Do sends the driver a command.
func (c *LiveClient) Do(cmd map[string]any) {
	c.t.Helper()
	b, _ := json.Marshal(cmd)
	if _, err := c.stdin.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("liveclient: %v", err)
	}
}

// Connect opens socket name on the base URL with the token (nil: no auth at all).
func (c *LiveClient) Connect(name, baseURL string, token any, opts ...map[string]any) {
	c.t.Helper()
	cmd := map[string]any{"op": "connect", "name": name, "url": baseURL, "token": token}
	for _, o := range opts {
		for k, v := range o {
			cmd[k] = v
		}
	}
	c.Do(cmd)
}

// Events returns the events heard so far that match.
func (c *LiveClient) Events(match func(LiveEvent) bool) []LiveEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []LiveEvent
	for _, e := range c.got {
		if match(e) {
			out = append(out, e)
		}
	}
	return out
}

// Wait waits up to timeout until n events that match were heard, and returns them.
func (c *LiveClient) Wait(timeout time.Duration, n int, what string, match func(LiveEvent) bool) []LiveEvent {
	c.t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		if got := c.Events(match); len(got) >= n {
			return got
		}
		select {
		case <-c.added:
		case <-deadline.C:
			c.t.Fatalf("waited %v for %d of %s; heard %d, the last events: %s", timeout, n, what, len(c.Events(match)), c.tail(8))
			return nil
		}
	}
}

// WaitOne waits for the first event that matches.
func (c *LiveClient) WaitOne(timeout time.Duration, what string, match func(LiveEvent) bool) LiveEvent {
	c.t.Helper()
	return c.Wait(timeout, 1, what, match)[0]
}

func (c *LiveClient) tail(n int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	from := max(0, len(c.got)-n)
	b, _ := json.Marshal(c.got[from:])
	return string(b)
}

// Is matches the events of socket name called ev.
func Is(name, ev string) func(LiveEvent) bool {
	return func(e LiveEvent) bool { return e.Name == name && e.Ev == ev }
}
