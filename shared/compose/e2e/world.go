package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/engines"
	"github.com/kilnbuild/kiln/shared/github/githubtest"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// world is a kiln serve wired to a fake GitHub with one installation and a few repositories,
// and an engines directory providing 5.3 and 5.4.
type World struct {
	*Server
	GitHub       *githubtest.Server
	Installation string // the installation id, as the API spells it
	OrgID        string
	Shooter      *githubtest.Repo
}

const InstallationID = 4242

const WebhookSecret = "whsec-kiln-tests"

const ShooterUproject = `{
	"FileVersion": 3,
	"EngineAssociation": "5.3",
	"Category": "",
	"Modules": [{"Name": "Shooter", "Type": "Runtime", "LoadingPhase": "Default"}],
	"Plugins": [{"Name": "ModelingToolsEditorMode", "Enabled": true}, {"Name": "OnlineSubsystemSteam", "Enabled": false}]
}`

// ToTheNextMinute runs the world's scheduler ahead of the clock, to just past the next minute,
// so that the first slot of an every-minute schedule made now is due at once; the slot after it
// is due a minute later, as on the clock.
func ToTheNextMinute(c *serve.Config) {
	now := time.Now()
	ahead := now.Truncate(time.Minute).Add(time.Minute + time.Second).Sub(now)
	c.SchedulerClock = func() time.Time { return time.Now().Add(ahead) }
}

// NewWorld starts the deployment d as a World; each configure changes its configuration first.
func NewWorld(t testing.TB, d Deployment, configure ...func(*serve.Config)) *World {
	t.Helper()
	gh := githubtest.New(t)
	gh.AddInstallation(InstallationID, "studio")
	shooter := gh.AddRepo(InstallationID, "studio/shooter", true, "main")
	shooter.Commit("main", "Add the game", "Ada Lovelace", map[string]string{
		"Shooter/Shooter.uproject":           ShooterUproject,
		"Shooter/Source/Shooter/Shooter.cpp": "// game\n",
		"README.md":                          "# Shooter\n",
	})
	shooter.Commit("dev", "Faster reloads", "Grace Hopper", map[string]string{"Shooter/Source/Shooter/Weapon.cpp": "// reload\n"})
	shooter.CreateBranches("main", "feature/Reload-UI", "release-1.0")
	gh.AddRepo(InstallationID, "studio/multi", false, "main").Commit("main", "Two games", "Ada Lovelace", map[string]string{
		"A/A.uproject": `{"EngineAssociation": "5.4"}`, "B/B.uproject": `{"EngineAssociation": "5.4"}`,
	})
	gh.AddRepo(InstallationID, "studio/tools", false, "main").Commit("main", "Tools", "Ada Lovelace", map[string]string{"tool.py": "print(1)\n"})
	gh.AddRepo(InstallationID, "studio/deep", false, "main").Commit("main", "Deep", "Ada Lovelace", map[string]string{
		"a/b/c/d/Deep.uproject": `{"EngineAssociation": "5.3"}`,
	})
	gh.AddInstallation(9999, "someone-else")
	gh.AddRepo(9999, "someone-else/secret", true, "main").Commit("main", "Secret", "Eve", map[string]string{"S.uproject": "{}"})

	dir := t.TempDir()
	keyPath := filepath.Join(dir, "github-serve.pem")
	if err := os.WriteFile(keyPath, gh.PrivateKeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	// The stand-in engine of testdata, installed as 5.3 and 5.4.
	enginesDir := filepath.Join(dir, "engines")
	for _, v := range []string{"5.3", "5.4"} {
		if err := os.CopyFS(filepath.Join(enginesDir, v), os.DirFS(RepoPath("testdata", "fake-engine"))); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(enginesDir, v, engines.RunUATPath), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	shareWithHosts(t, d, enginesDir, 0o755)
	cfg := NewConfig(t, filepath.Join(dir, "data"))
	cfg.GitHubAppID = strconv.FormatInt(gh.AppID, 10)
	cfg.GitHubAppKey = keyPath
	cfg.GitHubAPIURL = gh.URL()
	cfg.GitHubWebURL = gh.WebURL()
	cfg.Engines = enginesDir
	cfg.GitHubWebhookSecret = WebhookSecret
	cfg.SchedulerEvery = 100 * time.Millisecond
	for _, c := range configure {
		c(&cfg)
	}
	ts := StartService(t, d, cfg)
	w := &World{Server: ts, GitHub: gh, Installation: strconv.Itoa(InstallationID), Shooter: shooter}
	w.OrgID = OrgOf(t, ts)
	return w
}

// link links the test installation to the Local organization by id.
func (w *World) Link(t testing.TB) {
	t.Helper()
	r := w.Do(t, "PATCH", "/organizations/"+w.OrgID, w.Token, map[string]any{
		"integrationSettings": map[string]any{"github": map[string]any{"installationId": w.Installation}},
	})
	if r.Status != http.StatusOK {
		t.Fatalf("link: %d %s", r.Status, r.Raw)
	}
}

// addShooter links GitHub and creates the shooter project; it returns the project id.
func (w *World) AddShooter(t testing.TB) string {
	t.Helper()
	w.Link(t)
	r := w.Do(t, "POST", "/projects/add-repo", w.Token, map[string]any{
		"name": "Shooter", "installationId": w.Installation, "repoFullName": "studio/shooter",
	})
	if r.Status != http.StatusCreated {
		t.Fatalf("add-repo: %d %s", r.Status, r.Raw)
	}
	return Field(t, r.Body, "id")
}

// addSetting creates a build setting with the given fields over a valid Linux/Shipping one.
func (w *World) AddSetting(t testing.TB, projectID string, fields map[string]any) map[string]any {
	t.Helper()
	body := map[string]any{"platform": "Linux", "buildType": "Shipping", "ueVersion": "5.3", "trigger": "manual", "branch": "main"}
	for k, v := range fields {
		body[k] = v
	}
	r := w.Do(t, "POST", "/projects/"+projectID+"/build-settings", w.Token, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("create setting: %d %s", r.Status, r.Raw)
	}
	return r.Body
}

// items returns the items of a list answer.
func Items(t *testing.T, r Response) []map[string]any {
	t.Helper()
	raw, ok := r.Body["items"].([]any)
	if !ok {
		t.Fatalf("no items in %s", r.Raw)
	}
	out := make([]map[string]any, len(raw))
	for i, it := range raw {
		out[i] = it.(map[string]any)
	}
	return out
}

// tenant is an organization made with kiln admin bootstrap, and its owner's token.
type Tenant struct {
	OrgID, Token string
}

func BootstrapOrg(t testing.TB, ts *Server, name string) Tenant {
	t.Helper()
	if ts.AWS != nil {
		return bootstrapOrgOnAWSLocal(t, ts, name)
	}
	var out strings.Builder
	if err := serve.AdminBootstrap(context.Background(), ts.Config.Data, name, "owner@"+kiln.Slugify(name)+".example", "Owner", "", &out); err != nil {
		t.Fatal(err)
	}
	var created map[string]string
	if err := json.Unmarshal([]byte(out.String()), &created); err != nil {
		t.Fatal(err)
	}
	return Tenant{OrgID: created["organizationId"], Token: created["token"]}
}

// restart stops the service and starts it again on the same data directory.
func (w *World) Restart(t *testing.T, configure ...func(*serve.Config)) {
	t.Helper()
	if err := w.shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	for _, c := range configure {
		c(&w.Config)
	}
	token, expected := w.Token, w.refusals
	w.Server = StartService(t, w.Deployment, w.Config)
	w.Token, w.refusals = token, expected
}
