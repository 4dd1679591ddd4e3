package plans

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/kiln"
)

func startedAt(t *testing.T, b map[string]any, key string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, b[key].(string))
	if err != nil {
		t.Fatalf("%s of %v: %v", key, b["id"], err)
	}
	return at
}

// TestPlanForbidsWhatItDoesNotInclude: on free, a second project, Perforce credentials and auto
// deploy are 403 plan_limit_reached and change nothing; what the organization made on its
// earlier plan keeps working.
func TestPlanForbidsWhatItDoesNotInclude(t *testing.T) {
	e2e.Both(t, planForbidsWhatItDoesNotInclude)
}

func planForbidsWhatItDoesNotInclude(t *testing.T, dep e2e.Deployment) {
	w := e2e.NewWorld(t, dep, e2e.LoopbackAllowed)
	pid := w.AddShooter(t)
	deploying := w.AddSetting(t, pid, map[string]any{"platform": "Win64", "autoDeploy": true, "uploadBuildUrl": "http://127.0.0.1:9/upload"})
	plain := w.AddSetting(t, pid, nil)
	w.SetPlan(t, w.OrgID, "free", nil)

	settings := "/projects/" + pid + "/build-settings"
	cases := []struct {
		name, method, path string
		body               any
	}{
		{"a second project", "POST", "/projects/add-repo", map[string]any{"name": "Tools", "installationId": w.Installation, "repoFullName": "studio/deep", "uprojectPath": "a/b/c/d/Deep.uproject"}},
		{"a Perforce project", "POST", "/projects/add-perforce", map[string]any{"name": "Game", "depot": "//game/main", "streamPath": "//game/main"}},
		{"Perforce credentials", "PATCH", "/organizations/" + w.OrgID + "/perforce", map[string]any{"serverUrl": "ssl:127.0.0.1:1666", "userName": "builder", "ticket": "T"}},
		{"a setting with auto deploy", "POST", settings, map[string]any{"platform": "Android", "buildType": "Shipping", "ueVersion": "5.3", "trigger": "manual", "branch": "main", "autoDeploy": true, "uploadBuildUrl": "http://127.0.0.1:9/up"}},
		{"turning auto deploy on", "PATCH", settings + "/" + plain["id"].(string), map[string]any{"autoDeploy": true, "uploadBuildUrl": "http://127.0.0.1:9/up"}},
		{"pointing auto deploy elsewhere", "PATCH", settings + "/" + deploying["id"].(string), map[string]any{"uploadBuildUrl": "http://127.0.0.1:9/elsewhere"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := w.Do(t, c.method, c.path, w.Token, c.body)
			e2e.WantError(t, r, http.StatusForbidden, "plan_limit_reached")
			if msg, _ := r.Body["message"].(string); !strings.Contains(msg, "free plan") {
				t.Errorf("message %q does not name the plan", msg)
			}
		})
	}
	if got := e2e.Items(t, w.Do(t, "GET", "/projects", w.Token, nil)); len(got) != 1 {
		t.Errorf("%d projects, want the one made before", len(got))
	}
	if r := w.Do(t, "GET", "/organizations/"+w.OrgID, w.Token, nil); r.Body["perforce"] != nil {
		t.Errorf("Perforce credentials were saved: %s", r.Raw)
	}
	r := w.Do(t, "GET", settings+"/"+deploying["id"].(string), w.Token, nil)
	if r.Body["uploadBuildUrl"] != "http://127.0.0.1:9/upload" || r.Body["autoDeploy"] != true {
		t.Errorf("the auto deploy setting changed: %s", r.Raw)
	}
	if r := w.Do(t, "GET", settings+"/"+plain["id"].(string), w.Token, nil); r.Body["autoDeploy"] != false {
		t.Errorf("auto deploy was turned on: %s", r.Raw)
	}
	if got := e2e.Items(t, w.Do(t, "GET", settings, w.Token, nil)); len(got) != 2 {
		t.Errorf("%d settings, want 2", len(got))
	}
	// What exists keeps working: the auto deploy setting takes other edits and builds.
	if r := w.Do(t, "PATCH", settings+"/"+deploying["id"].(string), w.Token, map[string]any{"branch": "dev"}); r.Status != http.StatusOK {
		t.Errorf("editing another field of the auto deploy setting: %d %s", r.Status, r.Raw)
	}
	if r := w.Do(t, "PATCH", settings+"/"+plain["id"].(string), w.Token, map[string]any{"autoDeploy": false}); r.Status != http.StatusOK {
		t.Errorf("leaving auto deploy off: %d %s", r.Status, r.Raw)
	}
	w.Trigger(t, pid, deploying["id"].(string), "")
	// Back on pro, the same requests go through.
	w.SetPlan(t, w.OrgID, "pro", nil)
	if r := w.Do(t, "PATCH", settings+"/"+plain["id"].(string), w.Token, cases[4].body); r.Status != http.StatusOK {
		t.Errorf("turning auto deploy on, on pro: %d %s", r.Status, r.Raw)
	}
}

// TestUsageReport: any member reads the organization's usage of a month; a bad month is
// validation_failed; the minutes of a finished build, the projects and the artifact bytes show.
func TestUsageReport(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)
	id := w.Trigger(t, pid, sid, "")
	b := w.WaitEnded(t, id)
	if b["status"] != "complete" {
		t.Fatalf("build: %v", b)
	}
	month := time.Now().UTC().Format("2006-01")
	viewer := e2e.AddUser(t, w.Server, w.OrgID, "viewer")
	r := w.Do(t, "GET", "/organizations/"+w.OrgID+"/usage?month="+month, viewer, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("usage as a viewer: %d %s", r.Status, r.Raw)
	}
	u := r.Body
	minutes := u["buildMinutes"].(map[string]any)
	if u["plan"] != "enterprise" || u["month"] != month || minutes["used"] != float64(1) || minutes["allowed"] != nil ||
		minutes["byPlatform"].(map[string]any)["Linux"] != float64(1) {
		t.Errorf("usage: %v", u)
	}
	if p := u["projects"].(map[string]any); p["current"] != float64(1) || p["allowed"] != nil {
		t.Errorf("projects: %v", p)
	}
	if c := u["concurrentBuilds"].(map[string]any); c["current"] != float64(0) || c["allowed"] != nil {
		t.Errorf("concurrent builds: %v", c)
	}
	if n, _ := u["artifactStorageBytes"].(float64); n <= 0 {
		t.Errorf("artifact bytes: %v", u["artifactStorageBytes"])
	}
	if s := u["skippedTriggers"].(map[string]any); s["total"] != float64(0) {
		t.Errorf("skipped: %v", s)
	}
	// The build saved its build cache: held now, under KILN_CACHE_MAX_PER_ORG's default cap.
	if c, _ := u["buildCaches"].(map[string]any); c == nil || c["count"] != float64(1) || c["bytes"].(float64) <= 0 || c["maxBytes"] != float64(100<<30) {
		t.Errorf("build caches: %v", u["buildCaches"])
	}
	// Another month is empty; the plan's limits show once on free.
	w.SetPlan(t, w.OrgID, "free", nil)
	old := w.Usage(t, "?month=2020-01")
	if m := old["buildMinutes"].(map[string]any); m["used"] != float64(0) || m["allowed"] != float64(300) || len(m["byPlatform"].(map[string]any)) != 0 {
		t.Errorf("usage of 2020-01: %v", old)
	}
	if c := old["concurrentBuilds"].(map[string]any); c["allowed"] != float64(1) {
		t.Errorf("free concurrency: %v", c)
	}
	for _, bad := range []string{"2026-13", "2026-1", "26-01", "now", "2026-01-01"} {
		e2e.WantError(t, w.Do(t, "GET", "/organizations/"+w.OrgID+"/usage?month="+bad, w.Token, nil), http.StatusBadRequest, "validation_failed")
	}
	other := e2e.BootstrapOrg(t, w.Server, "Other")
	e2e.WantError(t, w.Do(t, "GET", "/organizations/"+w.OrgID+"/usage", other.Token, nil), http.StatusNotFound, "not_found")
}

// TestMinutesUsedUp: with a free allowance of one minute (KILN_PLANS), two builds that started
// together both finish, then a manual trigger is plan_limit_reached and a push is skipped:
// counted in the usage and sent to the organization's webhooks as build.skipped.
func TestMinutesUsedUp(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve, e2e.LoopbackAllowed, func(c *serve.Config) {
		c.Workers = 2
		c.Plans = kiln.DefaultPlans()
		c.Plans[kiln.PlanFree] = kiln.PlanLimits{BuildMinutesPerMonth: 1, ConcurrentBuilds: 2, Projects: 1}
	})
	hr := e2e.NewHookReceiver(t)
	hook := w.Do(t, "POST", "/organizations/"+w.OrgID+"/webhooks", w.Token, map[string]any{"url": hr.URL + "/hooks", "events": []string{"build.skipped"}})
	if hook.Status != http.StatusCreated {
		t.Fatalf("webhook: %d %s", hook.Status, hook.Raw)
	}
	hr.Mu.Lock()
	hr.Secret = e2e.Field(t, hook.Body, "secret")
	hr.Mu.Unlock()
	pid := w.AddShooter(t)
	w.SlowShooter("1")
	linux := w.AddSetting(t, pid, map[string]any{"branch": "slow"})["id"].(string)
	android := w.AddSetting(t, pid, map[string]any{"branch": "slow", "platform": "Android"})["id"].(string)
	push := w.AddSetting(t, pid, map[string]any{"trigger": "push", "branch": "dev"})["id"].(string)
	w.SetPlan(t, w.OrgID, "free", nil)

	a, b := w.Trigger(t, pid, linux, ""), w.Trigger(t, pid, android, "")
	for _, id := range []string{a, b} {
		if got := w.WaitEnded(t, id); got["status"] != "complete" {
			t.Fatalf("build %s: %v; running builds finish when the allowance runs out", id, got)
		}
	}
	r := w.Do(t, "POST", "/projects/"+pid+"/build-settings/"+linux+"/trigger", w.Token, "")
	e2e.WantError(t, r, http.StatusForbidden, "plan_limit_reached")
	if msg := r.Body["message"].(string); !strings.Contains(msg, "1 build minutes per month") || !strings.Contains(msg, "free plan") {
		t.Errorf("message %q does not name the limit and the plan", msg)
	}

	sha := w.Shooter.Commit("dev", "Pushed", "Grace Hopper", map[string]string{"Shooter/Source/Version.txt": "pushed\n"})
	body := `{"ref":"refs/heads/dev","after":"` + sha + `","deleted":false,"repository":{"full_name":"studio/shooter"},"installation":{"id":4242}}`
	for _, delivery := range []string{"d-1", "d-1-replayed"} {
		if r := w.SendPush(t, e2e.WebhookSecret, delivery, "push", body); r.Status != http.StatusAccepted || len(r.Body["builds"].([]any)) != 0 {
			t.Fatalf("push over the allowance: %d %s", r.Status, r.Raw)
		}
	}
	if got := e2e.Items(t, w.Do(t, "GET", "/builds?buildSettingId="+push, w.Token, nil)); len(got) != 0 {
		t.Fatalf("the push built: %v", got)
	}
	u := w.Usage(t, "")
	if m := u["buildMinutes"].(map[string]any); m["used"] != float64(2) || m["allowed"] != float64(1) {
		t.Errorf("minutes: %v", m)
	}
	if s := u["skippedTriggers"].(map[string]any); s["push"] != float64(1) || s["total"] != float64(1) || s["scheduled"] != float64(0) {
		t.Errorf("skipped: %v", s)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(hr.Events()) < 1 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	evs := hr.Events()
	if len(evs) != 1 || evs[0]["type"] != "build.skipped" || evs[0]["_event"] != "build.skipped" {
		t.Fatalf("webhook events: %v", evs)
	}
	sk := evs[0]["data"].(map[string]any)["skipped"].(map[string]any)
	if sk["buildSettingId"] != push || sk["projectId"] != pid || sk["trigger"] != "push" || sk["commit"] != sha || sk["branch"] != "dev" {
		t.Errorf("skipped event: %v", sk)
	}
}

// TestConcurrencyLimitQueues: on free (one build at a time) a second build waits pending while
// the first runs, and is taken when its slot frees; a plan change while builds run applies to
// the builds waiting.
func TestConcurrencyLimitQueues(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve, func(c *serve.Config) { c.Workers = 2 })
	pid := w.AddShooter(t)
	w.SlowShooter("1")
	var sids []string
	for _, platform := range []string{"Linux", "Android", "Mac", "IOS"} { // none supersedes another
		sids = append(sids, w.AddSetting(t, pid, map[string]any{"branch": "slow", "platform": platform, "ueVersion": "5.3"})["id"].(string))
	}
	w.SetPlan(t, w.OrgID, "free", nil)

	first, second := w.Trigger(t, pid, sids[0], ""), w.Trigger(t, pid, sids[1], "")
	w.WaitStatus(t, first, "running")
	if b := w.Do(t, "GET", "/builds/"+second, w.Token, nil).Body; b["status"] != "pending" {
		t.Fatalf("the second build is %v while the first runs; want pending", b["status"])
	}
	if c := w.Usage(t, "")["concurrentBuilds"].(map[string]any); c["current"] != float64(1) || c["allowed"] != float64(1) {
		t.Errorf("concurrent builds: %v", c)
	}
	a, b := w.WaitEnded(t, first), w.WaitEnded(t, second)
	if a["status"] != "complete" || b["status"] != "complete" || startedAt(t, b, "startedAt").Before(startedAt(t, a, "finishedAt")) {
		t.Fatalf("the second build started at %v, before the first ended (%v)", b["startedAt"], a["finishedAt"])
	}

	// A plan change while builds run: the waiting build starts beside the running one.
	third, fourth := w.Trigger(t, pid, sids[2], ""), w.Trigger(t, pid, sids[3], "")
	w.WaitStatus(t, third, "running")
	if s := w.Do(t, "GET", "/builds/"+fourth, w.Token, nil).Body["status"]; s != "pending" {
		t.Fatalf("the fourth build is %v; want pending", s)
	}
	two := 2
	w.SetPlan(t, w.OrgID, "enterprise", &two)
	w.WaitStatus(t, fourth, "running")
	c, d := w.WaitEnded(t, third), w.WaitEnded(t, fourth)
	if !startedAt(t, d, "startedAt").Before(startedAt(t, c, "finishedAt")) {
		t.Fatalf("after the upgrade the fourth build started at %v, after the third ended (%v)", d["startedAt"], c["finishedAt"])
	}
}
