package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
)

// sendPush delivers a GitHub push event, signed with secret.
func (w *World) SendPush(t *testing.T, secret, delivery, event, body string) Response {
	t.Helper()
	req, _ := http.NewRequest("POST", w.URL()+"/webhooks/github", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", delivery)
	if secret != "" {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte(body))
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(m.Sum(nil)))
	}
	return w.DoRequest(t, req)
}
