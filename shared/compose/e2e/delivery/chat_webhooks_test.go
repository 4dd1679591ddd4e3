package delivery

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestChatWebhooks: an owner adds a Slack webhook whose incoming-webhook URL (pointing at a
// 127.0.0.1 test server, which the world's outbound allow list lets through) is never shown
// again, only masked; a finished build reaches it as a Slack message.
func TestChatWebhooks(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve, e2e.LoopbackAllowed)
	var (
		mu     sync.Mutex
		bodies []map[string]any
		paths  []string
	)
	slack := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m map[string]any
		if json.Unmarshal(body, &m) != nil || r.Header.Get("X-Kiln-Signature") != "" {
			rw.WriteHeader(400)
			return
		}
		mu.Lock()
		bodies, paths = append(bodies, m), append(paths, r.URL.Path)
		mu.Unlock()
		rw.Write([]byte("ok"))
	}))
	t.Cleanup(slack.Close)
	const token = "XyZsecretTOKEN0123456789"
	secretURL := slack.URL + "/services/T0001/B0001/" + token
	base := "/organizations/" + w.OrgID + "/webhooks"

	for _, bad := range []map[string]any{
		{"format": "slack", "url": "https://evil.example.com/services/T/B/" + token, "events": []string{"build.failed"}},
		{"format": "discord", "url": "https://hooks.slack.com/services/T/B/" + token, "events": []string{"build.failed"}},
		{"format": "slack", "url": secretURL, "events": []string{"build.created"}},
		{"format": "slack", "events": []string{"build.failed"}},
		{"format": "teams", "url": secretURL, "events": []string{"build.failed"}},
	} {
		r := w.Do(t, "POST", base, w.Token, bad)
		e2e.WantError(t, r, 400, "validation_failed")
		if strings.Contains(r.Raw, token) {
			t.Fatalf("an error quotes the URL: %s", r.Raw)
		}
	}

	created := w.Do(t, "POST", base, w.Token, map[string]any{"format": "slack", "url": secretURL, "events": []string{"build.failed", "build.fixed", "build.complete"}})
	if created.Status != 201 || created.Body["format"] != "slack" || created.Body["secret"] != nil {
		t.Fatalf("create: %d %s", created.Status, created.Raw)
	}
	hook := e2e.Field(t, created.Body, "id")
	if want := slack.URL + "/…6789"; created.Body["url"] != want {
		t.Errorf("url shown %v, want the mask %s", created.Body["url"], want)
	}
	shown := []e2e.Response{created, w.Do(t, "GET", base+"/"+hook, w.Token, nil), w.Do(t, "GET", base, w.Token, nil),
		w.Do(t, "PATCH", base+"/"+hook, w.Token, map[string]any{"active": true})}
	e2e.WantError(t, w.Do(t, "PATCH", base+"/"+hook, w.Token, map[string]any{"format": "discord"}), 400, "validation_failed")
	e2e.WantError(t, w.Do(t, "PATCH", base+"/"+hook, w.Token, map[string]any{"events": []string{"build.running"}}), 400, "validation_failed")

	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)
	w.WaitEnded(t, w.Trigger(t, pid, sid, ""))
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		mu.Lock()
		n := len(bodies)
		mu.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 1 || paths[0] != "/services/T0001/B0001/"+token {
		t.Fatalf("slack got %d messages at %v, want one at the sealed URL", len(bodies), paths)
	}
	if text, _ := bodies[0]["text"].(string); !strings.HasPrefix(text, "Build #1 of ") || !strings.Contains(text, "completed") || bodies[0]["blocks"] == nil {
		t.Errorf("slack message %v", bodies[0])
	}
	shown = append(shown, w.Do(t, "GET", base+"/"+hook+"/deliveries", w.Token, nil))
	for _, r := range shown {
		if r.Status != 200 && r.Status != 201 || strings.Contains(r.Raw, token) || strings.Contains(r.Raw, "B0001") {
			t.Fatalf("%d %s: shows the incoming-webhook URL", r.Status, r.Raw)
		}
	}
}
