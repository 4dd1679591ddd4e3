package app

import (
	"encoding/json"
	"net/http"
	"testing"
)

// follow opens GET /builds/:id/logs?follow=1; a 200 stays open until the test ends.
func (w *world) follow(t *testing.T, id, token string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", w.URL()+"/builds/"+id+"/logs?follow=1", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func wantRateLimited(t *testing.T, resp *http.Response, what string) {
	t.Helper()
	var body struct{ Error, Message string }
	json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != 429 || body.Error != "rate_limited" || resp.Header.Get("Retry-After") != "10" {
		t.Fatalf("%s: %d %q %q Retry-After %q", what, resp.StatusCode, body.Error, body.Message, resp.Header.Get("Retry-After"))
	}
}

func TestLogFollowersAreCappedPerTokenAndPerBuild(t *testing.T) {
	w := newWorld(t)
	pid := w.addShooter(t)
	w.shooter.Commit("slow", "Slow build", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=30\n"})
	sid := w.addSetting(t, pid, map[string]any{"branch": "slow"})["id"].(string)
	id := w.trigger(t, pid, sid, "")
	w.waitStatus(t, id, "running")

	tokens := []string{w.token}
	for range 4 {
		r := w.do(t, "POST", "/auth/tokens", w.token, map[string]any{"name": "follower"})
		tokens = append(tokens, field(t, r.Body, "token"))
	}
	// Five followers per token: the sixth of the same token waits.
	for i := range 5 {
		if resp := w.follow(t, id, tokens[0]); resp.StatusCode != 200 {
			t.Fatalf("follower %d: %d", i+1, resp.StatusCode)
		}
	}
	wantRateLimited(t, w.follow(t, id, tokens[0]), "sixth follower of one token")
	// Twenty per build: three more tokens' five each fill it, and a fifth token is refused.
	for _, tok := range tokens[1:4] {
		for i := range 5 {
			if resp := w.follow(t, id, tok); resp.StatusCode != 200 {
				t.Fatalf("follower %d of another token: %d", i+1, resp.StatusCode)
			}
		}
	}
	wantRateLimited(t, w.follow(t, id, tokens[4]), "twenty-first follower of the build")
	// Reading the whole log without following is not limited.
	if text := w.logText(t, id); text == "" {
		t.Fatal("empty log")
	}
	if r := w.do(t, "POST", "/builds/"+id+"/cancel", w.token, nil); r.Status != 200 {
		t.Fatalf("cancel: %d %s", r.Status, r.Raw)
	}
}
