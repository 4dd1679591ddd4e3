package builds

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

func wantRateLimited(t *testing.T, resp *http.Response, what string) {
	t.Helper()
	var body struct{ Error, Message string }
	json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != 429 || body.Error != "rate_limited" || resp.Header.Get("Retry-After") != "10" {
		t.Fatalf("%s: %d %q %q Retry-After %q", what, resp.StatusCode, body.Error, body.Message, resp.Header.Get("Retry-After"))
	}
}

func TestLogFollowersAreCappedPerTokenAndPerBuild(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	pid := w.AddShooter(t)
	w.Shooter.Commit("slow", "Slow build", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=30\n"})
	sid := w.AddSetting(t, pid, map[string]any{"branch": "slow"})["id"].(string)
	id := w.Trigger(t, pid, sid, "")
	w.WaitStatus(t, id, "running")

	tokens := []string{w.Token}
	for range 4 {
		r := w.Do(t, "POST", "/auth/tokens", w.Token, map[string]any{"name": "follower"})
		tokens = append(tokens, e2e.Field(t, r.Body, "token"))
	}
	// Five followers per token: the sixth of the same token waits.
	for i := range 5 {
		if resp := w.Follow(t, id, tokens[0]); resp.StatusCode != 200 {
			t.Fatalf("follower %d: %d", i+1, resp.StatusCode)
		}
	}
	wantRateLimited(t, w.Follow(t, id, tokens[0]), "sixth follower of one token")
	// Twenty per build: three more tokens' five each fill it, and a fifth token is refused.
	for _, tok := range tokens[1:4] {
		for i := range 5 {
			if resp := w.Follow(t, id, tok); resp.StatusCode != 200 {
				t.Fatalf("follower %d of another token: %d", i+1, resp.StatusCode)
			}
		}
	}
	wantRateLimited(t, w.Follow(t, id, tokens[4]), "twenty-first follower of the build")
	// Reading the whole log without following is not limited (LogText fails on any answer but
	// 200); the build's first lines come within its first flushes.
	for deadline := time.Now().Add(20 * time.Second); w.LogText(t, id) == ""; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("empty log")
		}
	}
	if r := w.Do(t, "POST", "/builds/"+id+"/cancel", w.Token, nil); r.Status != 200 {
		t.Fatalf("cancel: %d %s", r.Status, r.Raw)
	}
}
