package app

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/agentapi/hostclient"
	"github.com/kilnbuild/kiln/shared/agentpool"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// rivalStudio is a second organization with its own GitHub installation and a copy of the
// shooter: its owner's token and its project id.
func rivalStudio(t *testing.T, w *world) (tenant, string) {
	t.Helper()
	rival := bootstrapOrg(t, w.testService, "Rival Studio")
	w.gh.AddInstallation(5151, "rival")
	w.gh.AddRepo(5151, "rival/racer", true, "main").Commit("main", "Add the game", "Eve", map[string]string{
		"Racer/Racer.uproject": shooterUproject, "Racer/Source/Racer/Racer.cpp": "// racer\n",
	})
	if r := w.do(t, "PATCH", "/organizations/"+rival.orgID, rival.token, map[string]any{
		"integrationSettings": map[string]any{"github": map[string]any{"installationId": "5151"}}}); r.Status != 200 {
		t.Fatalf("link rival: %d %s", r.Status, r.Raw)
	}
	r := w.do(t, "POST", "/projects/add-repo", rival.token, map[string]any{"name": "Racer", "installationId": "5151", "repoFullName": "rival/racer"})
	if r.Status != 201 {
		t.Fatalf("rival add-repo: %d %s", r.Status, r.Raw)
	}
	return rival, field(t, r.Body, "id")
}

// poolSetting makes a Win64 setting of project for pool (with token) and returns its id.
func poolSetting(t *testing.T, w *world, token, project, pool, buildType string) string {
	t.Helper()
	r := w.do(t, "POST", "/projects/"+project+"/build-settings", token, map[string]any{
		"platform": "Win64", "buildType": buildType, "ueVersion": "5.3", "trigger": "manual", "branch": "main", "agentPool": pool})
	if r.Status != 201 {
		t.Fatalf("create setting: %d %s", r.Status, r.Raw)
	}
	return field(t, r.Body, "id")
}

func triggerAs(t *testing.T, w *world, token, project, setting string) string {
	t.Helper()
	r := w.do(t, "POST", "/projects/"+project+"/build-settings/"+setting+"/trigger", token, "")
	if r.Status != 202 {
		t.Fatalf("trigger: %d %s", r.Status, r.Raw)
	}
	return field(t, r.Body, "buildId")
}

func waitAs(t *testing.T, w *world, token, id string, cond func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		r := w.do(t, "GET", "/builds/"+id, token, nil)
		if r.Status == 200 && cond(r.Body) {
			return r.Body
		}
		if time.Now().After(deadline) {
			t.Fatalf("build %s: %d %s", id, r.Status, r.Raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func ended(b map[string]any) bool {
	return b["status"] == "complete" || b["status"] == "failed" || b["status"] == "superseded"
}

// TestAgentsOfTwoOrganizationsNeverCrossOver: two organizations each have an agent in a pool of
// the same name; each agent builds its own organization's builds only, even when the other's is
// older and it has nothing else to do. The build completes through the host API with a streamed
// artifact into kiln serve's file store, downloadable as any other.
func TestAgentsOfTwoOrganizationsNeverCrossOver(t *testing.T) {
	w := newWorld(t)
	project := w.addShooter(t)
	rival, rivalProject := rivalStudio(t, w)
	_, ours := createAgent(t, w.testService, w.token, w.orgID, "studio box", "win")
	_, theirs := createAgent(t, w.testService, rival.token, rival.orgID, "rival box", "win")

	ourBuild := triggerAs(t, w, w.token, project, poolSetting(t, w, w.token, project, "win", "Shipping"))
	rivalAgent := startAgent(t, w, theirs)
	rivalBuild := triggerAs(t, w, rival.token, rivalProject, poolSetting(t, w, rival.token, rivalProject, "win", "Shipping"))
	if b := waitAs(t, w, rival.token, rivalBuild, ended); b["status"] != "complete" {
		t.Fatalf("rival build: %v", b)
	}
	// The rival's agent was idle and claiming all along, our build older than its own: it left it.
	if b := w.do(t, "GET", "/builds/"+ourBuild, w.token, nil).Body; b["status"] != "pending" || b["waitingFor"] != "an agent in pool win" {
		t.Fatalf("our build while only the rival's agent runs: %v", b)
	}
	ourAgent := startAgent(t, w, ours)
	b := waitAs(t, w, w.token, ourBuild, ended)
	if b["status"] != "complete" {
		t.Fatalf("our build: %v\n%s", b, w.logText(t, ourBuild))
	}
	if got := ourAgent.claimed(); !slices.Equal(got, []string{ourBuild}) {
		t.Errorf("our agent claimed %v, want %s", got, ourBuild)
	}
	if got := rivalAgent.claimed(); !slices.Equal(got, []string{rivalBuild}) {
		t.Errorf("the rival's agent claimed %v, want %s", got, rivalBuild)
	}
	var art map[string]any
	for _, a := range items(t, w.do(t, "GET", "/projects/"+project+"/artifacts", w.token, nil)) {
		if a["buildId"] == ourBuild {
			art = a
		}
	}
	if art == nil {
		t.Fatal("the agent's build has no artifact")
	}
	d := w.do(t, "GET", "/builds/"+ourBuild+"/download", w.token, nil)
	if data := fetchArtifact(t, field(t, d.Body, "url")); md5hex(data) != art["checksumMd5"] || float64(len(data)) != art["sizeBytes"] {
		t.Fatalf("the streamed artifact: %d bytes, MD5 %s; recorded %v", len(data), md5hex(data), art)
	} else if files := items(t, w.do(t, "GET", "/builds/"+ourBuild+"/manifest?limit=100", w.token, nil)); len(files) == 0 || len(files) != len(tarFiles(t, data)) {
		t.Fatalf("the agent's size manifest lists %d files, the artifact holds %d", len(files), len(tarFiles(t, data)))
	}
	list := items(t, w.do(t, "GET", "/organizations/"+w.orgID+"/agents", w.token, nil))
	if len(list) != 1 || list[0]["lastSeenAt"] == nil {
		t.Errorf("the agent's lastSeenAt is not recorded: %v", list)
	}
}

// TestAgentPoolRouting: a build for pool A, or of a platform the agent does not offer, is not
// taken by an agent of another pool, nor by kiln serve's own workers; the agent of pool A takes
// it.
func TestAgentPoolRouting(t *testing.T) {
	w := newWorld(t)
	project := w.addShooter(t)
	_, poolB := createAgent(t, w.testService, w.token, w.orgID, "b box", "pool-b")
	_, linuxOnly := createAgent(t, w.testService, w.token, w.orgID, "linux box", "pool-a")
	_, poolA := createAgent(t, w.testService, w.token, w.orgID, "a box", "pool-a")
	other := startAgent(t, w, poolB)
	linux := startAgent(t, w, linuxOnly, "Linux")
	build := triggerAs(t, w, w.token, project, poolSetting(t, w, w.token, project, "pool-a", "Shipping"))
	// A build kiln serve's worker does run, queued after it, ends first.
	plain := w.addSetting(t, project, map[string]any{"buildType": "Development"})
	if b := w.waitEnded(t, w.trigger(t, project, plain["id"].(string), "")); b["status"] != "complete" {
		t.Fatalf("local build: %v", b)
	}
	time.Sleep(1500 * time.Millisecond) // more than a claim's wait of the idle agents
	if b := w.do(t, "GET", "/builds/"+build, w.token, nil).Body; b["status"] != "pending" || b["waitingFor"] != "an agent in pool pool-a" {
		t.Fatalf("build for pool-a with no agent that can take it: %v", b)
	}
	right := startAgent(t, w, poolA)
	b := waitAs(t, w, w.token, build, ended)
	if b["status"] != "complete" {
		t.Fatalf("build: %v", b)
	}
	wantCompleteStages(t, b) // the agent's stage lines came through the host API
	if !right.ran(build) || len(other.claimed()) != 0 || len(linux.claimed()) != 0 {
		t.Fatalf("claims: pool-a %v, pool-b %v, Linux-only %v", right.claimed(), other.claimed(), linux.claimed())
	}
}

// TestAgentRevokedMidBuild: revoking the agent that runs a build fails the build at once with
// the reason; the agent's next host call is refused, it stops the build, and its next claim is
// refused (401): the agent loop ends.
func TestAgentRevokedMidBuild(t *testing.T) {
	w, id, a, build := agentMidBuild(t)
	if r := w.do(t, "DELETE", "/organizations/"+w.orgID+"/agents/"+id, w.token, nil); r.Status != 204 {
		t.Fatalf("revoke: %d %s", r.Status, r.Raw)
	}
	if b := w.do(t, "GET", "/builds/"+build, w.token, nil).Body; b["status"] != "failed" || b["failureReason"] != agentpool.ReasonRevoked {
		t.Fatalf("build after the revocation: %v", b)
	}
	select {
	case err := <-a.done: // a.stop is not called before this
		if kiln.ErrorCode(errorsUnwrapAll(err)) != kiln.EInvalidToken {
			t.Fatalf("agent loop ended with %v, want invalid_token", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the revoked agent kept going")
	}
	a.stopOnce.Do(func() {}) // the loop ended: the cleanup's stop has nothing to wait for
	if !strings.Contains(w.logText(t, build), agentpool.ReasonRevoked) {
		t.Errorf("log does not end with the reason:\n%s", w.logText(t, build))
	}
}

// TestKilledAgentsBuildFailsAsHostLost: an agent that dies mid-build stops reporting; the
// service's silent-host check fails its build after kiln.HeartbeatTimeout (30 s, checked every
// 5 s) and the next build goes to the other agent of the pool.
func TestKilledAgentsBuildFailsAsHostLost(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the 30-second silent-host check")
	}
	w := newWorld(t)
	project := w.addShooter(t)
	w.shooter.Commit("slow", "Slow", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=120\n"})
	_, first := createAgent(t, w.testService, w.token, w.orgID, "first", "win")
	_, second := createAgent(t, w.testService, w.token, w.orgID, "second", "win")
	dying := startAgent(t, w, first)
	setting := poolSetting(t, w, w.token, project, "win", "Shipping")
	r := w.do(t, "POST", "/projects/"+project+"/build-settings/"+setting+"/trigger", w.token, map[string]any{"branch": "slow"})
	lost := field(t, r.Body, "buildId")
	w.waitBuild(t, lost, "building on the first agent", func(b map[string]any) bool { return b["status"] == "running" && b["commit"] != nil })
	survivor := startAgent(t, w, second)
	dying.kill()
	b := waitAs(t, w, w.token, lost, ended)
	if b["status"] != "failed" || b["failureReason"] != "the build host stopped reporting for 30 seconds" {
		t.Fatalf("lost build: %v", b)
	}
	next := triggerAs(t, w, w.token, project, setting)
	if b := waitAs(t, w, w.token, next, ended); b["status"] != "complete" || !survivor.ran(next) {
		t.Fatalf("next build: %v, survivor claimed %v", b, survivor.claimed())
	}
	if !dying.ran(lost) {
		t.Fatalf("the first agent claimed %v", dying.claimed())
	}
}

// TestStoppedAgentFailsItsBuild: an agent stopped mid-build (SIGTERM) stops the engine and
// fails its build as interrupted at once, rather than leaving it to the silent-host check.
func TestStoppedAgentFailsItsBuild(t *testing.T) {
	w, _, a, build := agentMidBuild(t)
	a.stop()
	if b := w.do(t, "GET", "/builds/"+build, w.token, nil).Body; b["status"] != "failed" || b["failureReason"] != hostclient.ReasonAgentStopped {
		t.Fatalf("build of the stopped agent: %v", b)
	}
}

// TestAgentUsesTheURLItClaimedWith: the service's public URL may not be reachable from the
// agent's machine (a proxy, a LAN name): the agent runs the build at the URL it claims with.
func TestAgentUsesTheURLItClaimedWith(t *testing.T) {
	w := newWorld(t, func(c *Config) { c.PublicURL, c.publicURLFromAddr = "http://127.0.0.1:9", false })
	project := w.addShooter(t)
	_, token := createAgent(t, w.testService, w.token, w.orgID, "box", "win")
	a := startAgent(t, w, token)
	build := triggerAs(t, w, w.token, project, poolSetting(t, w, w.token, project, "win", "Shipping"))
	if b := waitAs(t, w, w.token, build, ended); b["status"] != "complete" || !a.ran(build) {
		t.Fatalf("build: %v", b)
	}
}
