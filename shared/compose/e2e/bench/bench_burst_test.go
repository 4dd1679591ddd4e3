package bench

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/awscost"
	"github.com/kilnbuild/kiln/shared/compose/awslocalapp"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
)

// Scale of the burst. The is 30 organizations, 300 builds and a CodeBuild quota of 20;
// this machine (2 cores) runs a smaller one of the same shape: burstBusy organizations trigger
// burstPerOrg builds each (one per build type: none supersedes another), then one organization
// triggers a single build, with the quota at burstQuota.
const (
	burstBusy   = 5
	burstPerOrg = 5
	burstQuota  = 4
)

// BenchmarkAWSLocalBurst is a burst past CodeBuild's quota on kiln aws-local: busy organizations
// trigger burstPerOrg builds each, then a one-build organization its one, all at once, with
// KILN_CODEBUILD_QUOTA=burstQuota. Every build must complete (none fails for the quota). It
// reports the makespan against builds / quota × one build's run time alone, the one-build
// organization's trigger → complete against its time alone (the goal: within 2×), and the
// control plane's cost per build, the waiting included (the goal: under $0.005).
//
//	go test -run '^$' -bench AWSLocalBurst -benchtime 1x ./shared/compose/e2e/bench/
func BenchmarkAWSLocalBurst(b *testing.B) {
	for b.Loop() {
		w := e2e.NewWorld(b, e2e.AWSLocal, func(c *serve.Config) { c.Workers = burstQuota }, e2e.WithCodeBuildQuota(burstQuota))
		type org struct{ token, project string }
		var orgs []org
		for i := range burstBusy + 1 {
			// Each organization has a GitHub installation and a repository of its own.
			inst, account := int64(20000+i), fmt.Sprint("studio-", i)
			w.GitHub.AddInstallation(inst, account)
			w.GitHub.AddRepo(inst, account+"/game", true, "main").Commit("main", "Game", "Ada Lovelace", map[string]string{
				"Game.uproject": `{"EngineAssociation": "5.3"}`})
			t := e2e.BootstrapOrg(b, w.Server, fmt.Sprint("Studio ", i))
			if r := w.Do(b, "PATCH", "/organizations/"+t.OrgID, t.Token, map[string]any{
				"integrationSettings": map[string]any{"github": map[string]any{"installationId": fmt.Sprint(inst)}}}); r.Status != http.StatusOK {
				b.Fatalf("link: %d %s", r.Status, r.Raw)
			}
			r := w.Do(b, "POST", "/projects/add-repo", t.Token, map[string]any{"name": "Game", "installationId": fmt.Sprint(inst), "repoFullName": account + "/game"})
			if r.Status != http.StatusCreated {
				b.Fatalf("add-repo: %d %s", r.Status, r.Raw)
			}
			orgs = append(orgs, org{t.Token, e2e.Field(b, r.Body, "id")})
		}
		settings := make([][]string, len(orgs))
		for i, o := range orgs {
			for _, buildType := range []string{"Shipping", "Development", "DebugGame", "Test", "Server"}[:burstPerOrg] {
				r := w.Do(b, "POST", "/projects/"+o.project+"/build-settings", o.token, map[string]any{
					"platform": "Linux", "buildType": buildType, "ueVersion": "5.3", "trigger": "manual", "branch": "main"})
				if r.Status != http.StatusCreated {
					b.Fatalf("setting: %d %s", r.Status, r.Raw)
				}
				settings[i] = append(settings[i], e2e.Field(b, r.Body, "id"))
			}
		}
		trigger := func(i, s int) string {
			r := w.Do(b, "POST", "/projects/"+orgs[i].project+"/build-settings/"+settings[i][s]+"/trigger", orgs[i].token, "")
			if r.Status != http.StatusAccepted {
				b.Fatalf("trigger: %d %s", r.Status, r.Raw)
			}
			return e2e.Field(b, r.Body, "buildId")
		}
		wait := func(i int, id string) map[string]any {
			for deadline := time.Now().Add(15 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
				got := w.Do(b, "GET", "/builds/"+id, orgs[i].token, nil).Body
				if s := got["status"]; s == "complete" || s == "failed" || s == "superseded" {
					return got
				}
				if time.Now().After(deadline) {
					b.Fatalf("build %s still %v", id, got["status"])
				}
			}
		}
		// One build alone: its run time (startedAt → finishedAt) and its trigger → complete.
		lone := len(orgs) - 1
		solo := wait(lone, trigger(lone, 1))
		if solo["status"] != "complete" {
			b.Fatalf("the solo build ended %v: %v", solo["status"], solo["failureReason"])
		}
		soloRun := stamp(b, solo, "finishedAt").Sub(stamp(b, solo, "startedAt"))
		soloTotal := stamp(b, solo, "finishedAt").Sub(stamp(b, solo, "createdAt"))

		before, endedBefore := w.AWS.MeterReading(), w.AWS.ExecutionsEnded()
		type triggered struct {
			org int
			id  string
		}
		var all []triggered
		for s := range burstPerOrg { // the busy organizations' builds, interleaved as they push
			for i := range burstBusy {
				all = append(all, triggered{i, trigger(i, s)})
			}
		}
		all = append(all, triggered{lone, trigger(lone, 0)}) // the one-build organization's, last
		var first, last time.Time
		failed := 0
		var loneTotal time.Duration
		for _, t := range all {
			got := wait(t.org, t.id)
			if got["status"] != "complete" {
				failed++
				b.Errorf("build %s ended %v: %v", t.id, got["status"], got["failureReason"])
				continue
			}
			created, finished := stamp(b, got, "createdAt"), stamp(b, got, "finishedAt")
			if first.IsZero() || created.Before(first) {
				first = created
			}
			if finished.After(last) {
				last = finished
			}
			if t.org == lone {
				loneTotal = finished.Sub(created)
			}
		}
		deadline := time.Now().Add(30 * time.Second)
		for w.AWS.ExecutionsEnded() < endedBefore+len(all) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		per := w.AWS.MeterReading().Sub(before).Without(awslocalapp.BackgroundPrincipals...).Scale(1 / float64(len(all)))
		cost := awscost.USEast1.Cost(per.Total())
		makespan := last.Sub(first)
		ideal := time.Duration(float64(len(all)) / burstQuota * float64(soloRun))
		b.ReportMetric(makespan.Seconds(), "makespan-s")
		b.ReportMetric(ratio(makespan, ideal), "makespan/ideal")
		b.ReportMetric(ratio(loneTotal, soloTotal), "lone/solo")
		b.ReportMetric(cost.Total, "usd/build")
		b.ReportMetric(float64(failed), "failed")
		b.ReportMetric(0, "ns/op")
		fmt.Printf("AWSLocalBurst: %d organizations, %d builds, CodeBuild quota %d: %d failed; makespan %v against %d/%d × %v = %v (×%.2f); "+
			"the one-build organization's build took %v from its trigger against %v alone (×%.2f, goal ≤ 2); the control plane $%.6f per build (goal < $0.005), %.1f transitions per build\n",
			burstBusy+1, len(all), burstQuota, failed, makespan.Round(time.Second), len(all), burstQuota, soloRun.Round(time.Millisecond), ideal.Round(time.Second),
			ratio(makespan, ideal), loneTotal.Round(time.Millisecond), soloTotal.Round(time.Millisecond), ratio(loneTotal, soloTotal), cost.Total, per.Total().StateTransitions)
	}
}
