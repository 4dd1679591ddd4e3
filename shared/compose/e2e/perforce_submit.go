package e2e

import (
	"testing"
)

// submit posts a submit event as the Helix trigger would, with a bearer token.
func (w *perforceWorld) Submit(t *testing.T, token, body string) Response {
	t.Helper()
	return w.Do(t, "POST", "/webhooks/perforce", token, body)
}
