package e2e

import (
	"testing"
)

// linked reports whether the world's organization has GitHub linked, as token sees it.
func (w *World) Linked(t *testing.T, orgID, token string) bool {
	t.Helper()
	return w.Do(t, "GET", "/organizations/"+orgID, token, nil).Body["integrationSettings"].(map[string]any)["github"] != nil
}
