package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// slowColdEngine makes the stand-in engine's cold build slow (10 objects of 300 ms to compile,
// 40 assets of 250 ms to cook: 13 s) and a warm one skip all of it.
const slowColdEngine = "FAKE_UAT_OBJECTS=10\nFAKE_UAT_COMPILE_MS=300\nFAKE_UAT_ASSETS=40\nFAKE_UAT_COOK_MS=250\n"

// BenchmarkWarmBuild times the first (cold) and the second (warm, from the first's build cache)
// build of a branch, and the first build of a new branch (warm from its project's default
// branch's cache), end to end from trigger to complete, on kiln serve and on kiln aws-local
// (CodeBuild hosts that start empty), and prints second/first and newbranch/first. Goal: at
// most 0.2 each.
func BenchmarkWarmBuild(b *testing.B) {
	for _, deployment := range e2e.Deployments {
		b.Run(deployment.String(), func(b *testing.B) {
			w := e2e.NewWorld(b, deployment)
			w.Shooter.Commit("main", "Slow cold build", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": slowColdEngine})
			pid := w.AddShooter(b)
			sid := w.AddSetting(b, pid, nil)["id"].(string)
			// timed builds the setting to completion (clean when asked) and says how long it took.
			timed := func(body string) (time.Duration, map[string]any) {
				start := time.Now()
				id := w.Trigger(b, pid, sid, body)
				bd := w.WaitEnded(b, id)
				if bd["status"] != "complete" {
					b.Fatalf("build %s: %v\n%s", id, bd["failureReason"], w.LogText(b, id))
				}
				return time.Since(start), bd
			}
			var firsts, seconds, branches time.Duration
			for i := 0; i < b.N; i++ {
				clean := ""
				if i > 0 {
					clean = `{"clean": true}` // each round starts cold again
				}
				d, _ := timed(clean)
				firsts += d
				d, bd := timed("")
				if c, _ := bd["cache"].(map[string]any); c["state"] != "warm" {
					b.Fatalf("second build did not start warm: %v\n%s", bd["cache"], w.LogText(b, bd["id"].(string)))
				}
				seconds += d
				branch := fmt.Sprintf("feature-%d-%d", time.Now().UnixNano(), i)
				w.Shooter.CreateBranches("main", branch)
				d, bd = timed(`{"branch": "` + branch + `"}`)
				if c, _ := bd["cache"].(map[string]any); c["state"] != "warm" {
					b.Fatalf("a new branch's first build did not start warm: %v\n%s", bd["cache"], w.LogText(b, bd["id"].(string)))
				}
				branches += d
			}
			ratio := seconds.Seconds() / firsts.Seconds()
			b.ReportMetric(firsts.Seconds()/float64(b.N), "s/first")
			b.ReportMetric(seconds.Seconds()/float64(b.N), "s/second")
			b.ReportMetric(ratio, "second/first")
			b.ReportMetric(branches.Seconds()/firsts.Seconds(), "newbranch/first")
			fmt.Printf("  warm build on %-10s first %6.1fs  second %6.1fs  second/first %.2f  new branch %6.1fs  newbranch/first %.2f (goals <= 0.20)\n",
				deployment, firsts.Seconds()/float64(b.N), seconds.Seconds()/float64(b.N), ratio,
				branches.Seconds()/float64(b.N), branches.Seconds()/firsts.Seconds())
		})
	}
}
