package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
)

const hookSecret = "whsec-test"

func newHookServer(t *testing.T, reads int) *Server {
	t.Helper()
	st, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), "kiln.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	keys, _ := keyring.New(make([]byte, keyring.MasterKeySize))
	return New(Config{Store: st, Keys: keys, GitHubWebhookSecret: hookSecret, GitHubWebhookReads: reads,
		RateLimit: RateLimit{PerSecond: 1000, Burst: 1000}, Logger: discardLog()})
}

func sign(body string) string {
	m := hmac.New(sha256.New, []byte(hookSecret))
	io.WriteString(m, body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// countingBody records how many bytes a handler read from it; with block set, its first Read
// reports on started and then waits for release.
type countingBody struct {
	r        io.Reader
	n        atomic.Int64
	started  chan struct{}
	release  chan struct{}
	startedN atomic.Bool
}

func (b *countingBody) Read(p []byte) (int, error) {
	if b.started != nil && !b.startedN.Swap(true) {
		close(b.started)
		<-b.release
	}
	n, err := b.r.Read(p)
	b.n.Add(int64(n))
	return n, err
}

func hookRequest(body io.Reader, event, signature string) *http.Request {
	req := httptest.NewRequest("POST", "/webhooks/github", body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", "d-1")
	if signature != "" {
		req.Header.Set("X-Hub-Signature-256", signature)
	}
	return req
}

// TestGitHubWebhookRefusesUnsignedRequestsUnread: a request without a well-formed signature is
// 401 before one byte of its body is read.
func TestGitHubWebhookRefusesUnsignedRequestsUnread(t *testing.T) {
	s := newHookServer(t, 0)
	for _, sig := range []string{"", "sha1=abcd", "sha256=", "sha256=zz", "sha256=" + strings.Repeat("0", 63)} {
		body := &countingBody{r: strings.NewReader(`{"zen":"x"}`)}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, hookRequest(body, "ping", sig))
		if rec.Code != 401 || !strings.Contains(rec.Body.String(), `"invalid_token"`) {
			t.Fatalf("signature %q: %d %s", sig, rec.Code, rec.Body)
		}
		if n := body.n.Load(); n != 0 {
			t.Fatalf("signature %q: the handler read %d bytes of an unsigned body", sig, n)
		}
	}
	// A well-formed but wrong signature needs the body, and is 401 too.
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, hookRequest(strings.NewReader(`{"zen":"x"}`), "ping", sign(`{"zen":"y"}`)))
	if rec.Code != 401 {
		t.Fatalf("wrong signature: %d %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, hookRequest(strings.NewReader(`{"zen":"x"}`), "ping", sign(`{"zen":"x"}`)))
	if rec.Code != 200 {
		t.Fatalf("signed ping: %d %s", rec.Code, rec.Body)
	}
}

// TestGitHubWebhookLimitsBodiesReadAtOnce: while the read slots are taken by bodies being read,
// another delivery is 429 rate_limited with Retry-After and its body is not read; once a slot
// is free, deliveries are read again.
func TestGitHubWebhookLimitsBodiesReadAtOnce(t *testing.T) {
	s := newHookServer(t, 2)
	const ping = `{"zen":"x"}`
	var slow []*countingBody
	done := make(chan int, 2)
	for range 2 {
		b := &countingBody{r: strings.NewReader(ping), started: make(chan struct{}), release: make(chan struct{})}
		slow = append(slow, b)
		go func() {
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, hookRequest(b, "ping", sign(ping)))
			done <- rec.Code
		}()
		<-b.started
	}
	extra := &countingBody{r: strings.NewReader(ping)}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, hookRequest(extra, "ping", sign(ping)))
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "1" || !strings.Contains(rec.Body.String(), `"rate_limited"`) {
		t.Fatalf("a delivery over the limit: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	if extra.n.Load() != 0 {
		t.Fatalf("the refused delivery's body was read")
	}
	for _, b := range slow {
		close(b.release)
		if code := <-done; code != 200 {
			t.Fatalf("a slow delivery: %d", code)
		}
	}
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, hookRequest(strings.NewReader(ping), "ping", sign(ping)))
	if rec.Code != 200 {
		t.Fatalf("a delivery after the slots were freed: %d %s", rec.Code, rec.Body)
	}
}

// bigPing is a signed ping event of about size bytes, generated as it is read.
func bigPing(size int) (io.Reader, string) {
	gen := func() io.Reader {
		return io.MultiReader(strings.NewReader(`{"zen":"`), io.LimitReader(repeatReader('a'), int64(size)), strings.NewReader(`"}`))
	}
	m := hmac.New(sha256.New, []byte(hookSecret))
	io.Copy(m, gen())
	return gen(), "sha256=" + hex.EncodeToString(m.Sum(nil))
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// TestGitHubWebhookHashesTheBodyAsItStreams: a 20 MiB delivery is verified without the body
// being held: the handler allocates a small fraction of it. Over 25 MiB is 413.
func TestGitHubWebhookHashesTheBodyAsItStreams(t *testing.T) {
	s := newHookServer(t, 0)
	const size = 20 << 20
	body, sig := bigPing(size)
	req := hookRequest(body, "ping", sig)
	rec := httptest.NewRecorder()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s.ServeHTTP(rec, req)
	runtime.ReadMemStats(&after)
	if rec.Code != 200 {
		t.Fatalf("big signed ping: %d %s", rec.Code, rec.Body)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size/8 {
		t.Fatalf("verifying a %d MiB delivery allocated %d bytes: the body is held", size>>20, alloc)
	}

	body, sig = bigPing(maxWebhookBytes)
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, hookRequest(body, "ping", sig))
	if rec.Code != 413 {
		t.Fatalf("over 25 MiB: %d %s", rec.Code, rec.Body)
	}
	big := hookRequest(strings.NewReader("{}"), "ping", sign("{}"))
	big.ContentLength = maxWebhookBytes + 1
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, big)
	if rec.Code != 413 {
		t.Fatalf("a Content-Length over 25 MiB: %d %s", rec.Code, rec.Body)
	}
}

func TestDecodePush(t *testing.T) {
	const full = `{"ref":"refs/heads/main","before":"0000","after":"abc123","created":false,"deleted":false,
		"repository":{"id":1,"full_name":"studio/shooter","owner":{"login":"studio"},"topics":["a",["b"]]},
		"commits":[{"id":"x","message":"a \"quoted\" message {with} [brackets]","added":[],"author":{"name":"n"}}],
		"head_commit":null,"installation":{"id":42,"node_id":"n"},"sender":{"login":"s"}}`
	tests := []struct {
		name, body string
		want       pushEvent
		bad        bool
	}{
		{"github push", full, pushEvent{Ref: "refs/heads/main", After: "abc123", Repo: struct {
			FullName string `json:"full_name"`
		}{"studio/shooter"}, Installation: struct {
			ID int64 `json:"id"`
		}{42}}, false},
		{"epoch-second repository dates", `{"ref":"refs/heads/x","repository":{"full_name":"a/b","created_at":1767225600,"pushed_at":1767312000,"updated_at":"2026-01-02T00:00:00Z"}}`,
			pushEvent{Ref: "refs/heads/x", Repo: struct {
				FullName string `json:"full_name"`
			}{"a/b"}}, false},
		{"deleted", `{"deleted":true,"ref":"refs/heads/x"}`, pushEvent{Ref: "refs/heads/x", Deleted: true}, false},
		{"empty object", `{}`, pushEvent{}, false},
		{"not an object", `["ref"]`, pushEvent{}, true},
		{"truncated", full[:len(full)-10], pushEvent{}, true},
		{"data after the object", `{"ref":"refs/heads/a"} {"ref":"refs/heads/b"}`, pushEvent{}, true},
		{"wrong type", `{"ref":1}`, pushEvent{}, true},
		{"not json", `ref=main`, pushEvent{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodePush(strings.NewReader(tt.body))
			if (err != nil) != tt.bad {
				t.Fatalf("error %v, want error %v", err, tt.bad)
			}
			if !tt.bad && got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeInstallation(t *testing.T) {
	body := `{"action":"removed","installation":{"id":7,"account":{"login":"studio"},"permissions":{"statuses":"write"},"suspended_at":null},
		"repository_selection":"selected","repositories_added":[],"repositories_removed":[{"id":1,"full_name":"studio/a"},{"id":2,"full_name":"studio/b"}],
		"requester":null,"sender":{"login":"s"}}`
	got, err := decodeInstallation(strings.NewReader(body))
	if err != nil || got.Action != "removed" || got.Installation.ID != 7 || len(got.RepositoriesRemoved) != 2 || got.RepositoriesRemoved[1].FullName != "studio/b" {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := decodeInstallation(strings.NewReader(`{"installation":{"id":"7"}}`)); err == nil {
		t.Fatal("a string id decoded")
	}
}

func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
