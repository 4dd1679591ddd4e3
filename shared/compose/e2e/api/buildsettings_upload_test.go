package api

import (
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestUploadAuthHeaderStaysWithItsOrigin: a PATCH that points uploadBuildUrl at another origin
// (scheme, host or port), or removes it, without a new uploadBuildAuthHeader drops the stored
// header, so a member cannot redirect someone else's secret to a server of their choosing.
func TestUploadAuthHeaderStaysWithItsOrigin(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	pid := w.AddShooter(t)
	const start = "https://deploy.example/upload"
	tests := []struct {
		name  string
		patch map[string]any
		set   bool
	}{
		{"another field", map[string]any{"notifyOnComplete": true}, true},
		{"same url", map[string]any{"uploadBuildUrl": start}, true},
		{"another path", map[string]any{"uploadBuildUrl": "https://deploy.example/v2/upload"}, true},
		{"default port spelled out", map[string]any{"uploadBuildUrl": "https://DEPLOY.example:443/upload"}, true},
		{"another host", map[string]any{"uploadBuildUrl": "https://attacker.example/upload"}, false},
		{"another scheme", map[string]any{"uploadBuildUrl": "http://deploy.example/upload"}, false},
		{"another port", map[string]any{"uploadBuildUrl": "https://deploy.example:8443/upload"}, false},
		{"url removed", map[string]any{"uploadBuildUrl": nil, "autoDeploy": false}, false},
		{"another host with a new header", map[string]any{"uploadBuildUrl": "https://other.example/upload", "uploadBuildAuthHeader": "Bearer new"}, true},
		{"header removed on the same origin", map[string]any{"uploadBuildAuthHeader": nil}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sid := w.AddSetting(t, pid, map[string]any{"autoDeploy": true, "uploadBuildUrl": start, "uploadBuildAuthHeader": "Bearer old-secret"})["id"].(string)
			path := "/projects/" + pid + "/build-settings/" + sid
			r := w.Do(t, "PATCH", path, w.Token, tt.patch)
			if r.Status != 200 || r.Body["uploadBuildAuthHeaderSet"] != tt.set {
				t.Fatalf("PATCH %v: %d %s, want uploadBuildAuthHeaderSet %v", tt.patch, r.Status, r.Raw, tt.set)
			}
			if got := w.Do(t, "GET", path, w.Token, nil); got.Body["uploadBuildAuthHeaderSet"] != tt.set {
				t.Fatalf("GET after PATCH: %s", got.Raw)
			}
		})
	}
	// A refused PATCH changes nothing, the header included.
	sid := w.AddSetting(t, pid, map[string]any{"autoDeploy": true, "uploadBuildUrl": start, "uploadBuildAuthHeader": "Bearer old-secret"})["id"].(string)
	path := "/projects/" + pid + "/build-settings/" + sid
	e2e.WantError(t, w.Do(t, "PATCH", path, w.Token, map[string]any{"uploadBuildUrl": "https://attacker.example/upload", "platform": "PS5"}), 400, "validation_failed")
	if got := w.Do(t, "GET", path, w.Token, nil); got.Body["uploadBuildAuthHeaderSet"] != true || got.Body["uploadBuildUrl"] != start {
		t.Fatalf("a refused PATCH changed the setting: %s", got.Raw)
	}
}
