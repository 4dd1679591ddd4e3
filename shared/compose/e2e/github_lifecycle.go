package e2e

import (
	"os"
	"strings"
	"testing"
)

// sendEvent delivers a payload of testdata/github as event, signed, with AFTER replaced by after.
func (w *World) SendEvent(t *testing.T, event, file, after string) Response {
	t.Helper()
	body, err := os.ReadFile(RepoPath("shared", "compose", "e2e", "testdata", "github", file))
	if err != nil {
		t.Fatal(err)
	}
	r := w.SendPush(t, WebhookSecret, "d-"+file, event, strings.ReplaceAll(string(body), "AFTER", after))
	if r.Status/100 != 2 {
		t.Fatalf("%s: %d %s", file, r.Status, r.Raw)
	}
	return r
}

func (w *World) WantFailure(t *testing.T, pid, sid, reason string) {
	t.Helper()
	b := w.WaitEnded(t, w.Trigger(t, pid, sid, ""))
	if b["status"] != "failed" || !strings.Contains(b["failureReason"].(string), reason) {
		t.Fatalf("build: want failed with %q, got %v", reason, b)
	}
}
