package e2e

import (
	"encoding/json"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/serve"
)

// perforceWorld is a world whose organization has saved credentials for the fake p4 server and a
// Perforce project of the Shooter game on //game/main with one manual Linux setting.
type perforceWorld struct {
	*World
	P4        string // the fake p4; its state is p4 + ".state.json", its argv log p4 + ".log"
	ProjectID string
	SettingID string
}

// p4BuildState is a depot with the Shooter game on //game/main: Version.txt says which
// changelist a workspace holds (the stand-in engine copies it into the artifact).
func P4BuildState() map[string]any {
	return map[string]any{
		"port": "ssl4:127.0.0.1:1666", "ssl": true, "fingerprint": p4Fingerprint,
		"users":   map[string]string{"builder": P4Ticket},
		"streams": []string{"//game/main", "//game/dev"},
		"files": map[string]string{
			"//game/main/Shooter/Shooter.uproject":           ShooterUproject,
			"//game/main/Shooter/Source/Shooter/Shooter.cpp": "// game\n",
			"//game/main/Shooter/Source/Version.txt":         "cl-1\n",
		},
		"changes": []map[string]any{
			{"change": 10, "path": "//game/main/...", "desc": "Add the reload animation",
				"files": map[string]string{"//game/main/Shooter/Source/Version.txt": "cl-10\n"}},
			{"change": 11, "path": "//game/main/...", "desc": "Faster reloads\n\n... status pending no more: tuned by design.",
				"files": map[string]string{"//game/main/Shooter/Source/Version.txt": "cl-11\n", "//game/main/Shooter/Source/Shooter/Weapon.cpp": "// reload\n"}},
			{"change": 12, "path": "//game/main/...", "desc": "Work in progress", "pending": true,
				"files": map[string]string{"//game/main/Shooter/Source/Version.txt": "cl-12\n"}},
		},
	}
}

// WithP4 makes kiln run p4 as its Perforce client and allows loopback addresses (where the fake
// server listens) as a Perforce server's.
func WithP4(p4 string) func(*serve.Config) {
	return func(c *serve.Config) {
		c.P4 = p4
		c.OutboundAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	}
}

func NewPerforceWorld(t *testing.T, d Deployment, configure ...func(*serve.Config)) *perforceWorld {
	t.Helper()
	p4 := FakeP4(t, d)
	SetP4State(t, d, p4, P4BuildState())
	w := NewWorld(t, d, append([]func(*serve.Config){WithP4(p4)}, configure...)...)
	r := w.Do(t, "PATCH", "/organizations/"+w.OrgID+"/perforce", w.Token,
		map[string]any{"serverUrl": "ssl:127.0.0.1:1666", "userName": "builder", "ticket": P4Ticket})
	if r.Status != 200 {
		t.Fatalf("save credentials: %d %s", r.Status, r.Raw)
	}
	r = w.Do(t, "POST", "/projects/add-perforce", w.Token, map[string]any{
		"name": "Shooter", "depot": "//game/main", "streamPath": "//game/main", "uprojectPath": "Shooter/Shooter.uproject"})
	if r.Status != 201 {
		t.Fatalf("add-perforce: %d %s", r.Status, r.Raw)
	}
	pid := Field(t, r.Body, "id")
	sid := w.AddSetting(t, pid, map[string]any{"branch": nil, "streamPath": "//game/main"})["id"].(string)
	return &perforceWorld{World: w, P4: p4, ProjectID: pid, SettingID: sid}
}

// setP4State replaces the fake server's state.
func SetP4State(t *testing.T, d Deployment, p4 string, state map[string]any) {
	t.Helper()
	b, _ := json.Marshal(state)
	if err := os.WriteFile(p4+".state.json", b, 0o600); err != nil {
		t.Fatal(err)
	}
	shareWithHosts(t, d, p4+".state.json", 0o644)
}

// artifactVersion downloads a complete build's artifact and returns its Version.txt.
func (w *perforceWorld) ArtifactVersion(t *testing.T, buildID string) string {
	t.Helper()
	d := w.Do(t, "GET", "/builds/"+buildID+"/download", w.Token, nil)
	if d.Status != 200 {
		t.Fatalf("download: %d %s", d.Status, d.Raw)
	}
	data := FetchArtifact(t, Field(t, d.Body, "url"))
	for name, content := range TarFiles(t, data) {
		if strings.HasSuffix(name, "/Version.txt") {
			return content
		}
	}
	t.Fatalf("no Version.txt in the artifact: %v", TarEntries(t, data))
	return ""
}
