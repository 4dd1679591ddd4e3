package plans

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/agentapi/hostclient"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestMinutesCheckedAtStart: a free organization with 1 of its 2 build minutes used queues
// builds on four branches (its plan runs one at a time). The first runs and uses the last
// minute; the three waiting then fail with a reason naming the plan's minutes and never start
// (no start time, no checkout), so the month's usage stays at the allowance.
func TestMinutesCheckedAtStart(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve, func(c *serve.Config) {
		c.Workers = 2
		c.Plans = kiln.DefaultPlans()
		c.Plans[kiln.PlanFree] = kiln.PlanLimits{BuildMinutesPerMonth: 2, ConcurrentBuilds: 1, Projects: 1}
	})
	pid := w.AddShooter(t)
	w.SlowShooter("1")
	sid := w.AddSetting(t, pid, map[string]any{"branch": "slow"})["id"].(string)
	var branches []string
	for i := range 4 {
		b := fmt.Sprintf("feature-%d", i+1)
		w.Shooter.Commit(b, "Work on "+b, "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=1\n"})
		branches = append(branches, b)
	}
	w.SetPlan(t, w.OrgID, "free", nil)
	if b := w.WaitEnded(t, w.Trigger(t, pid, sid, "")); b["status"] != "complete" {
		t.Fatalf("the first build: %v", b)
	}
	if m := w.Usage(t, "")["buildMinutes"].(map[string]any); m["used"] != float64(1) {
		t.Fatalf("minutes before the queue: %v", m)
	}

	var ids []string
	for _, b := range branches {
		ids = append(ids, w.Trigger(t, pid, sid, `{"branch":"`+b+`"}`))
	}
	first := w.WaitEnded(t, ids[0])
	if first["status"] != "complete" {
		t.Fatalf("the build that had a minute left: %v", first)
	}
	for _, id := range ids[1:] {
		b := w.WaitEnded(t, id)
		reason, _ := b["failureReason"].(string)
		if b["status"] != "failed" || !strings.HasPrefix(reason, "plan limit: ") || !strings.Contains(reason, "free plan") ||
			!strings.Contains(reason, "2 build minutes") {
			t.Errorf("build %s queued before the minutes ran out: %s %q; want failed for the plan's minutes", id, b["status"], reason)
		}
		if b["startedAt"] != nil || b["commit"] != nil && b["commit"] != "" {
			t.Errorf("build %s started (startedAt %v, commit %v)", id, b["startedAt"], b["commit"])
		}
	}
	if m := w.Usage(t, "")["buildMinutes"].(map[string]any); m["used"] != float64(2) || m["allowed"] != float64(2) {
		t.Errorf("minutes: %v; want 2 used of 2", m)
	}
}

// TestRevokedAgentsWaitingClaimGetsNoBuild: an agent long-polls for a build; its token is
// revoked while it waits; a build for its pool is then queued. The waiting claim ends with 401
// invalid_token, not with the build and a host credential, and the build stays pending.
func TestRevokedAgentsWaitingClaimGetsNoBuild(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve, func(c *serve.Config) { c.AgentWait = time.Minute })
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, map[string]any{"agentPool": "linux-big"})["id"].(string)
	agentID, secret := e2e.CreateAgent(t, w.Server, w.Token, w.OrgID, "box", "linux-big")

	answered := make(chan e2e.Response, 1)
	go func() {
		req, err := http.NewRequest("POST", w.URL()+agentapi.ClaimPath,
			strings.NewReader(`{"platforms":["Linux"],"engineVersions":["5.3"],"waitSeconds":20}`))
		if err != nil {
			answered <- e2e.Response{Raw: err.Error()}
			return
		}
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- e2e.Response{Raw: err.Error()}
			return
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		r := e2e.Response{Status: resp.StatusCode, Raw: string(raw)}
		_ = json.Unmarshal(raw, &r.Body)
		answered <- r
	}()
	time.Sleep(500 * time.Millisecond) // the claim is waiting
	select {
	case r := <-answered:
		t.Fatalf("the claim answered before any build was queued: %d %s", r.Status, r.Raw)
	default:
	}
	if r := w.Do(t, "DELETE", "/organizations/"+w.OrgID+"/agents/"+agentID, w.Token, nil); r.Status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", r.Status, r.Raw)
	}
	id := w.Trigger(t, pid, sid, "")

	var r e2e.Response
	select {
	case r = <-answered:
	case <-time.After(30 * time.Second):
		t.Fatal("the waiting claim did not end")
	}
	if r.Status != http.StatusUnauthorized || r.Body["error"] != "invalid_token" || strings.Contains(r.Raw, "hostCredential") {
		t.Errorf("the revoked agent's waiting claim: %d %s; want 401 invalid_token without a build", r.Status, r.Raw)
	}
	if b := w.Do(t, "GET", "/builds/"+id, w.Token, nil).Body; b["status"] != "pending" || b["startedAt"] != nil {
		t.Errorf("the build: %v; want it pending, claimed by nobody", b)
	}
}

// TestFreePlanSavesNoDeliveryAndRedeploysNothing: a free organization can save no upload
// address or header on a build setting, even with auto deploy off, and POST /builds/:id/deploy
// is refused on its plan; on a plan with auto deploy a redeploy still needs the build's setting
// to have auto deploy on. Nothing reaches the receiver.
func TestFreePlanSavesNoDeliveryAndRedeploysNothing(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve, e2e.LoopbackAllowed)
	rc := e2e.NewReceiver(t, func(int) int { return http.StatusNoContent })
	pid := w.AddShooter(t)
	plain := w.AddSetting(t, pid, nil)["id"].(string)
	id := w.Trigger(t, pid, plain, "")
	if b := w.WaitEnded(t, id); b["status"] != "complete" {
		t.Fatalf("build: %v", b)
	}
	w.SetPlan(t, w.OrgID, "free", nil)

	settings := "/projects/" + pid + "/build-settings"
	for _, c := range []struct {
		name, method, path string
		body               map[string]any
	}{
		{"a new setting's upload URL", "POST", settings, map[string]any{"platform": "Android", "buildType": "Shipping", "ueVersion": "5.3",
			"trigger": "manual", "branch": "main", "uploadBuildUrl": rc.URL + "/upload"}},
		{"a new setting's upload header", "POST", settings, map[string]any{"platform": "Android", "buildType": "Shipping", "ueVersion": "5.3",
			"trigger": "manual", "branch": "main", "uploadBuildAuthHeader": "Bearer s3cret"}},
		{"an upload URL with auto deploy off", "PATCH", settings + "/" + plain, map[string]any{"uploadBuildUrl": rc.URL + "/upload", "autoDeploy": false}},
		{"an upload header", "PATCH", settings + "/" + plain, map[string]any{"uploadBuildAuthHeader": "Bearer s3cret"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := w.Do(t, c.method, c.path, w.Token, c.body)
			e2e.WantError(t, r, http.StatusForbidden, "plan_limit_reached")
			if msg, _ := r.Body["message"].(string); !strings.Contains(msg, "free plan") || !strings.Contains(msg, "auto deploy") {
				t.Errorf("message %q names neither the plan nor auto deploy", msg)
			}
		})
	}
	if got := e2e.Items(t, w.Do(t, "GET", settings, w.Token, nil)); len(got) != 1 || got[0]["uploadBuildUrl"] != nil {
		t.Fatalf("settings after the refusals: %v", got)
	}
	// Clearing them stays allowed.
	if r := w.Do(t, "PATCH", settings+"/"+plain, w.Token, map[string]any{"uploadBuildUrl": nil, "uploadBuildAuthHeader": nil}); r.Status != http.StatusOK {
		t.Errorf("clearing the upload fields on free: %d %s", r.Status, r.Raw)
	}

	r := w.Do(t, "POST", "/builds/"+id+"/deploy", w.Token, nil)
	e2e.WantError(t, r, http.StatusForbidden, "plan_limit_reached")
	if b := w.Do(t, "GET", "/builds/"+id, w.Token, nil).Body; b["autoDeployStatus"] != nil {
		t.Errorf("a refused redeploy queued a delivery: %v", b["autoDeployStatus"])
	}

	// On pro the setting may name an address, but with auto deploy off nothing is delivered.
	w.SetPlan(t, w.OrgID, "pro", nil)
	if r := w.Do(t, "PATCH", settings+"/"+plain, w.Token, map[string]any{"uploadBuildUrl": rc.URL + "/upload"}); r.Status != http.StatusOK {
		t.Fatalf("an upload URL on pro: %d %s", r.Status, r.Raw)
	}
	r = w.Do(t, "POST", "/builds/"+id+"/deploy", w.Token, nil)
	e2e.WantError(t, r, http.StatusConflict, "invalid_state")
	if msg, _ := r.Body["message"].(string); !strings.Contains(msg, "auto deploy off") {
		t.Errorf("message %q does not say auto deploy is off", msg)
	}
	time.Sleep(300 * time.Millisecond) // a delivery wrongly queued would be sent by now
	if n := len(rc.Got()); n != 0 {
		t.Fatalf("the receiver got %d deliveries", n)
	}
}

// TestHostReportedMD5IsChecked: an agent's host uploads its artifact and completes the build
// reporting a wrong MD5 (or size): the report is refused (422 naming the field) and the build
// stays running; the true size and MD5 complete it, and the artifact records the MD5 the
// service measured.
func TestHostReportedMD5IsChecked(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, map[string]any{"agentPool": "linux-big"})["id"].(string)
	_, secret := e2e.CreateAgent(t, w.Server, w.Token, w.OrgID, "box", "linux-big")
	id := w.Trigger(t, pid, sid, "")
	loop := &hostclient.AgentLoop{URL: w.URL(), Token: secret, Platforms: []string{"Linux"}, EngineVersions: []string{"5.3"}, Wait: 5 * time.Second}
	claim, err := loop.Claim(t.Context())
	if err != nil || claim == nil || claim.BuildID != id {
		t.Fatalf("claim: %+v, %v", claim, err)
	}
	host := &hostclient.Client{BaseURL: claim.HostURL, Credential: claim.HostCredential}
	body := []byte("the artifact's bytes, as uploaded")
	if err := hostclient.NewArtifactStore(host, 1).Put(t.Context(), w.OrgID+"/"+id+".tar.gz", func(out io.Writer) error {
		_, err := out.Write(body)
		return err
	}); err != nil {
		t.Fatalf("upload: %v", err)
	}
	sum := md5.Sum(body)
	right := hex.EncodeToString(sum[:])
	for _, c := range []struct {
		name, md5, field string
		size             int64
	}{
		{"a wrong MD5", strings.Repeat("0", 32), "md5", int64(len(body))},
		{"a wrong size", right, "size", int64(len(body)) + 1},
	} {
		_, err := host.Complete(t.Context(), c.size, c.md5)
		var refused *kiln.Error
		if !errors.As(err, &refused) || refused.Code != kiln.EValidation || refused.Fields[c.field] == "" {
			t.Errorf("complete with %s: %v; want validation_failed naming %s", c.name, err, c.field)
		}
		if b := w.Do(t, "GET", "/builds/"+id, w.Token, nil).Body; b["status"] != "running" {
			t.Fatalf("after a report with %s the build is %v", c.name, b["status"])
		}
	}
	if st, err := host.Complete(t.Context(), int64(len(body)), right); err != nil || st.Status != "complete" {
		t.Fatalf("complete with the true MD5: %+v, %v", st, err)
	}
	d := w.Do(t, "GET", "/builds/"+id+"/download", w.Token, nil)
	if d.Status != http.StatusOK || d.Body["checksumMd5"] != right {
		t.Errorf("download: %d %s; want checksumMd5 %s", d.Status, d.Raw, right)
	}
}
