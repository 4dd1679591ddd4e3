package agents

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/agentapi/hostclient"
	"github.com/kilnbuild/kiln/shared/agentpool"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// rivalStudio is a second organization with its own GitHub installation and a copy of the
// shooter: its owner's token and its project id.
func rivalStudio(t *testing.T, w *e2e.World) (e2e.Tenant, string) {
	t.Helper()
	rival := e2e.BootstrapOrg(t, w.Server, "Rival Studio")
	w.GitHub.AddInstallation(5151, "rival")
	w.GitHub.AddRepo(5151, "rival/racer", true, "main").Commit("main", "Add the game", "Eve", map[string]string{
		"Racer/Racer.uproject": e2e.ShooterUproject, "Racer/Source/Racer/Racer.cpp": "// racer\n",
	})
	if r := w.Do(t, "PATCH", "/organizations/"+rival.OrgID, rival.Token, map[string]any{
		"integrationSettings": map[string]any{"github": map[string]any{"installationId": "5151"}}}); r.Status != 200 {
		t.Fatalf("link rival: %d %s", r.Status, r.Raw)
	}
	r := w.Do(t, "POST", "/projects/add-repo", rival.Token, map[string]any{"name": "Racer", "installationId": "5151", "repoFullName": "rival/racer"})
	if r.Status != 201 {
		t.Fatalf("rival add-repo: %d %s", r.Status, r.Raw)
	}
	return rival, e2e.Field(t, r.Body, "id")
}

// TestAgentsOfTwoOrganizationsNeverCrossOver: two organizations each have an agent in a pool of
// the same name; each agent builds its own organization's builds only, even when the other's is
// older and it has nothing else to do. The build completes through the host API with a streamed
// artifact into kiln serve's file store, downloadable as any other.
func TestAgentsOfTwoOrganizationsNeverCrossOver(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	project := w.AddShooter(t)
	rival, rivalProject := rivalStudio(t, w)
	_, ours := e2e.CreateAgent(t, w.Server, w.Token, w.OrgID, "studio box", "win")
	_, theirs := e2e.CreateAgent(t, w.Server, rival.Token, rival.OrgID, "rival box", "win")

	ourBuild := e2e.TriggerAs(t, w, w.Token, project, e2e.PoolSetting(t, w, w.Token, project, "win", "Shipping"))
	rivalAgent := e2e.StartAgent(t, w, theirs)
	rivalBuild := e2e.TriggerAs(t, w, rival.Token, rivalProject, e2e.PoolSetting(t, w, rival.Token, rivalProject, "win", "Shipping"))
	if b := e2e.WaitAs(t, w, rival.Token, rivalBuild, e2e.Ended); b["status"] != "complete" {
		t.Fatalf("rival build: %v", b)
	}
	// The rival's agent was idle and claiming all along, our build older than its own: it left it.
	if b := w.Do(t, "GET", "/builds/"+ourBuild, w.Token, nil).Body; b["status"] != "pending" || b["waitingFor"] != "an agent in pool win" {
		t.Fatalf("our build while only the rival's agent runs: %v", b)
	}
	ourAgent := e2e.StartAgent(t, w, ours)
	b := e2e.WaitAs(t, w, w.Token, ourBuild, e2e.Ended)
	if b["status"] != "complete" {
		t.Fatalf("our build: %v\n%s", b, w.LogText(t, ourBuild))
	}
	if got := ourAgent.Claimed(); !slices.Equal(got, []string{ourBuild}) {
		t.Errorf("our agent claimed %v, want %s", got, ourBuild)
	}
	if got := rivalAgent.Claimed(); !slices.Equal(got, []string{rivalBuild}) {
		t.Errorf("the rival's agent claimed %v, want %s", got, rivalBuild)
	}
	var art map[string]any
	for _, a := range e2e.Items(t, w.Do(t, "GET", "/projects/"+project+"/artifacts", w.Token, nil)) {
		if a["buildId"] == ourBuild {
			art = a
		}
	}
	if art == nil {
		t.Fatal("the agent's build has no artifact")
	}
	d := w.Do(t, "GET", "/builds/"+ourBuild+"/download", w.Token, nil)
	if data := e2e.FetchArtifact(t, e2e.Field(t, d.Body, "url")); e2e.MD5Hex(data) != art["checksumMd5"] || float64(len(data)) != art["sizeBytes"] {
		t.Fatalf("the streamed artifact: %d bytes, MD5 %s; recorded %v", len(data), e2e.MD5Hex(data), art)
	} else if files := e2e.Items(t, w.Do(t, "GET", "/builds/"+ourBuild+"/manifest?limit=100", w.Token, nil)); len(files) == 0 || len(files) != len(e2e.TarFiles(t, data)) {
		t.Fatalf("the agent's size manifest lists %d files, the artifact holds %d", len(files), len(e2e.TarFiles(t, data)))
	}
	list := e2e.Items(t, w.Do(t, "GET", "/organizations/"+w.OrgID+"/agents", w.Token, nil))
	if len(list) != 1 || list[0]["lastSeenAt"] == nil {
		t.Errorf("the agent's lastSeenAt is not recorded: %v", list)
	}
}

// TestAgentPoolRouting: a build for pool A, or of a platform the agent does not offer, is not
// taken by an agent of another pool, nor by kiln serve's own workers; the agent of pool A takes
// it.
func TestAgentPoolRouting(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	project := w.AddShooter(t)
	_, poolB := e2e.CreateAgent(t, w.Server, w.Token, w.OrgID, "b box", "pool-b")
	_, linuxOnly := e2e.CreateAgent(t, w.Server, w.Token, w.OrgID, "linux box", "pool-a")
	_, poolA := e2e.CreateAgent(t, w.Server, w.Token, w.OrgID, "a box", "pool-a")
	other := e2e.StartAgent(t, w, poolB)
	linux := e2e.StartAgent(t, w, linuxOnly, "Linux")
	build := e2e.TriggerAs(t, w, w.Token, project, e2e.PoolSetting(t, w, w.Token, project, "pool-a", "Shipping"))
	// A build kiln serve's worker does run, queued after it, ends first.
	plain := w.AddSetting(t, project, map[string]any{"buildType": "Development"})
	if b := w.WaitEnded(t, w.Trigger(t, project, plain["id"].(string), "")); b["status"] != "complete" {
		t.Fatalf("local build: %v", b)
	}
	time.Sleep(1500 * time.Millisecond) // more than a claim's wait of the idle agents
	if b := w.Do(t, "GET", "/builds/"+build, w.Token, nil).Body; b["status"] != "pending" || b["waitingFor"] != "an agent in pool pool-a" {
		t.Fatalf("build for pool-a with no agent that can take it: %v", b)
	}
	right := e2e.StartAgent(t, w, poolA)
	b := e2e.WaitAs(t, w, w.Token, build, e2e.Ended)
	if b["status"] != "complete" {
		t.Fatalf("build: %v", b)
	}
	e2e.WantCompleteStages(t, b) // the agent's stage lines came through the host API
	if !right.Ran(build) || len(other.Claimed()) != 0 || len(linux.Claimed()) != 0 {
		t.Fatalf("claims: pool-a %v, pool-b %v, Linux-only %v", right.Claimed(), other.Claimed(), linux.Claimed())
	}
}

// TestAgentRevokedMidBuild: revoking the agent that runs a build fails the build at once with
// the reason; the agent's next host call is refused, it stops the build, and its next claim is
// refused (401): the agent loop ends.
func TestAgentRevokedMidBuild(t *testing.T) {
	t.Parallel()
	w, id, a, build := e2e.AgentMidBuild(t)
	if r := w.Do(t, "DELETE", "/organizations/"+w.OrgID+"/agents/"+id, w.Token, nil); r.Status != 204 {
		t.Fatalf("revoke: %d %s", r.Status, r.Raw)
	}
	if b := w.Do(t, "GET", "/builds/"+build, w.Token, nil).Body; b["status"] != "failed" || b["failureReason"] != agentpool.ReasonRevoked {
		t.Fatalf("build after the revocation: %v", b)
	}
	select {
	case err := <-a.Done: // a.stop is not called before this
		if kiln.ErrorCode(e2e.ErrorsUnwrapAll(err)) != kiln.EInvalidToken {
			t.Fatalf("agent loop ended with %v, want invalid_token", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the revoked agent kept going")
	}
	a.StopOnce.Do(func() {}) // the loop ended: the cleanup's stop has nothing to wait for
	if !strings.Contains(w.LogText(t, build), agentpool.ReasonRevoked) {
		t.Errorf("log does not end with the reason:\n%s", w.LogText(t, build))
	}
}

// TestKilledAgentsBuildFailsAsHostLost: an agent that dies mid-build stops reporting; the
// service's silent-host check fails its build after kiln.HeartbeatTimeout (30 s, checked every
// 5 s) and the next build goes to the other agent of the pool.
func TestKilledAgentsBuildFailsAsHostLost(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits for the 30-second silent-host check")
	}
	w := e2e.NewWorld(t, e2e.Serve)
	project := w.AddShooter(t)
	w.Shooter.Commit("slow", "Slow", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=120\n"})
	_, first := e2e.CreateAgent(t, w.Server, w.Token, w.OrgID, "first", "win")
	_, second := e2e.CreateAgent(t, w.Server, w.Token, w.OrgID, "second", "win")
	dying := e2e.StartAgent(t, w, first)
	setting := e2e.PoolSetting(t, w, w.Token, project, "win", "Shipping")
	r := w.Do(t, "POST", "/projects/"+project+"/build-settings/"+setting+"/trigger", w.Token, map[string]any{"branch": "slow"})
	lost := e2e.Field(t, r.Body, "buildId")
	w.WaitBuild(t, lost, "building on the first agent", func(b map[string]any) bool { return b["status"] == "running" && b["commit"] != nil })
	survivor := e2e.StartAgent(t, w, second)
	dying.Kill()
	b := e2e.WaitAs(t, w, w.Token, lost, e2e.Ended)
	if b["status"] != "failed" || b["failureReason"] != "the build host stopped reporting for 30 seconds" {
		t.Fatalf("lost build: %v", b)
	}
	next := e2e.TriggerAs(t, w, w.Token, project, setting)
	if b := e2e.WaitAs(t, w, w.Token, next, e2e.Ended); b["status"] != "complete" || !survivor.Ran(next) {
		t.Fatalf("next build: %v, survivor claimed %v", b, survivor.Claimed())
	}
	if !dying.Ran(lost) {
		t.Fatalf("the first agent claimed %v", dying.Claimed())
	}
}

// TestStoppedAgentFailsItsBuild: an agent stopped mid-build (SIGTERM) stops the engine and
// fails its build as interrupted at once, rather than leaving it to the silent-host check.
func TestStoppedAgentFailsItsBuild(t *testing.T) {
	t.Parallel()
	w, _, a, build := e2e.AgentMidBuild(t)
	a.Stop()
	if b := w.Do(t, "GET", "/builds/"+build, w.Token, nil).Body; b["status"] != "failed" || b["failureReason"] != hostclient.ReasonAgentStopped {
		t.Fatalf("build of the stopped agent: %v", b)
	}
}

// TestAgentUsesTheURLItClaimedWith: the service's public URL may not be reachable from the
// agent's machine (a proxy, a LAN name): the agent runs the build at the URL it claims with.
func TestAgentUsesTheURLItClaimedWith(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve, func(c *serve.Config) { c.SetPublicURL("http://127.0.0.1:9") })
	project := w.AddShooter(t)
	_, token := e2e.CreateAgent(t, w.Server, w.Token, w.OrgID, "box", "win")
	a := e2e.StartAgent(t, w, token)
	build := e2e.TriggerAs(t, w, w.Token, project, e2e.PoolSetting(t, w, w.Token, project, "win", "Shipping"))
	if b := e2e.WaitAs(t, w, w.Token, build, e2e.Ended); b["status"] != "complete" || !a.Ran(build) {
		t.Fatalf("build: %v", b)
	}
}
