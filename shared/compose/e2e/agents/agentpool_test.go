package agents

import (
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
)

// TestAgentPoolSettingWaitsForAnAgent: a setting names an agent pool (validated); its builds carry
// the pool, show what they wait for, are never taken by kiln serve's own workers, and fail with a
// reason naming the pool once KILN_AGENT_WAIT passed without an agent. A setting without a pool
// still builds here.
func TestAgentPoolSettingWaitsForAnAgent(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve, func(c *serve.Config) { c.AgentWait = time.Second })
	project := w.AddShooter(t)
	for _, bad := range []string{"Win64", "-x", strings.Repeat("a", 64), "a b", "kiln-hosted-win64", "kiln-mine"} {
		r := w.Do(t, "POST", "/projects/"+project+"/build-settings", w.Token, map[string]any{
			"platform": "Linux", "buildType": "Shipping", "ueVersion": "5.3", "trigger": "manual", "branch": "main", "agentPool": bad})
		e2e.WantError(t, r, 400, "validation_failed")
	}
	// The agents offer their own engines: this service need not have 5.5 for a pool's setting.
	r := w.Do(t, "POST", "/projects/"+project+"/build-settings", w.Token, map[string]any{
		"platform": "Win64", "buildType": "Shipping", "ueVersion": "5.5", "trigger": "manual", "branch": "main", "agentPool": "win"})
	if r.Status != 201 {
		t.Fatalf("a pool's setting of an engine this service lacks: %d %s", r.Status, r.Raw)
	}
	e2e.WantError(t, w.Do(t, "PATCH", "/projects/"+project+"/build-settings/"+e2e.Field(t, r.Body, "id"), w.Token, map[string]any{"agentPool": nil}), 400, "engine_not_found")
	pooled := w.AddSetting(t, project, map[string]any{"agentPool": "linux-big"})
	if pooled["agentPool"] != "linux-big" {
		t.Fatalf("setting: %v", pooled)
	}
	plain := w.AddSetting(t, project, map[string]any{"buildType": "Development"}) // not superseding the other
	if plain["agentPool"] != nil {
		t.Fatalf("setting without a pool: %v", plain)
	}

	waiting := w.Trigger(t, project, pooled["id"].(string), "")
	b := w.Do(t, "GET", "/builds/"+waiting, w.Token, nil).Body
	if b["status"] != "pending" || b["agentPool"] != "linux-big" || b["waitingFor"] != "an agent in pool linux-big" {
		t.Fatalf("build for a pool: %v", b)
	}
	local := w.Trigger(t, project, plain["id"].(string), "")
	if b := w.WaitEnded(t, local); b["status"] != "complete" || b["agentPool"] != nil || b["waitingFor"] != nil {
		t.Fatalf("build without a pool: %v", b)
	}
	b = w.WaitEnded(t, waiting)
	if b["status"] != "failed" || b["startedAt"] != nil || b["waitingFor"] != nil ||
		b["failureReason"] != "no agent in pool linux-big claimed the build within 1s" {
		t.Fatalf("build no agent claimed: %v", b)
	}

	// Clearing the pool brings the setting's builds back to this machine.
	r = w.Do(t, "PATCH", "/projects/"+project+"/build-settings/"+pooled["id"].(string), w.Token, map[string]any{"agentPool": nil})
	if r.Status != 200 || r.Body["agentPool"] != nil {
		t.Fatalf("clear agentPool: %d %s", r.Status, r.Raw)
	}
	if b := w.WaitEnded(t, w.Trigger(t, project, pooled["id"].(string), "")); b["status"] != "complete" {
		t.Fatalf("build after clearing the pool: %v", b)
	}
}
