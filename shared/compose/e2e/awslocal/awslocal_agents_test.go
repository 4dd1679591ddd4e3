package awslocal

import (
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestAgentBuildAnswersItsTaskToken: a build for an agent pool waits in its execution's
// WaitForAgent state; an agent (`kiln agent` in-process) claims it through the API Gateway
// stand-in and the API Lambda, runs it through the host API and completes it; the API answers
// the state's task token (SendTaskSuccess), so the execution ends SUCCEEDED, and the token never
// shows in the API.
func TestAgentBuildAnswersItsTaskToken(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.AWSLocal)
	project := w.AddShooter(t)
	_, secret := e2e.CreateAgent(t, w.Server, w.Token, w.OrgID, "studio box", "win")
	id := e2e.TriggerAs(t, w, w.Token, project, e2e.PoolSetting(t, w, w.Token, project, "win", "Shipping"))
	if got := w.Execution(t, id, false); got != "RUNNING" {
		t.Fatalf("the execution of a build no agent claimed yet is %s, want RUNNING", got)
	}
	agent := e2e.StartAgent(t, w, secret)
	b := e2e.WaitAs(t, w, w.Token, id, e2e.Ended)
	if b["status"] != "complete" || !agent.Ran(id) {
		t.Fatalf("build: %v (the agent claimed %v)\n%s", b, agent.Claimed(), w.LogText(t, id))
	}
	if got := w.Execution(t, id, true); got != "SUCCEEDED" {
		t.Errorf("the execution of the agent's build ended %s, want SUCCEEDED", got)
	}
	for key := range w.Do(t, "GET", "/builds/"+id, w.Token, nil).Body {
		if strings.Contains(strings.ToLower(key), "token") {
			t.Errorf("the build's JSON has a field %q", key)
		}
	}
}
