package awslocal

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
)

// TestABuildRunsOnlyOnceItsHostRunsIt: with one CodeBuild slot (KILN_WORKERS=1), three builds
// triggered at once wait pending for their hosts (CodeBuild's queue is not build time): at most
// one is running at any moment, a pending build has no startedAt, and each build's startedAt is
// after the build before it finished.
func TestABuildRunsOnlyOnceItsHostRunsIt(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.AWSLocal, func(c *serve.Config) { c.Workers = 1 })
	pid := w.AddShooter(t)
	w.Shooter.Commit("slow", "Slow builds", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=1\n"})
	var ids []string
	for _, buildType := range []string{"Shipping", "Development", "DebugGame"} { // none supersedes another
		sid := w.AddSetting(t, pid, map[string]any{"branch": "slow", "buildType": buildType})["id"].(string)
		ids = append(ids, w.Trigger(t, pid, sid, ""))
	}
	ended := map[string]map[string]any{}
	for deadline := time.Now().Add(3 * time.Minute); len(ended) < len(ids); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the builds did not all end in time: %v", ended)
		}
		var running []string
		for _, id := range ids {
			if ended[id] != nil {
				continue
			}
			r := w.Do(t, "GET", "/builds/"+id, w.Token, nil)
			switch r.Body["status"] {
			case "running":
				running = append(running, id)
			case "pending":
				if r.Body["startedAt"] != nil {
					t.Errorf("pending build %s has startedAt %v", id, r.Body["startedAt"])
				}
			case "complete", "failed", "superseded":
				ended[id] = r.Body
			}
		}
		if len(running) > 1 {
			t.Fatalf("builds %v are running at once with one host slot", running)
		}
	}
	type span struct{ start, end time.Time }
	var spans []span
	for _, id := range ids {
		b := ended[id]
		if b["status"] != "complete" {
			t.Fatalf("build %s ended %v (%v)\nlog:\n%s", id, b["status"], b["failureReason"], w.LogText(t, id))
		}
		start, err1 := time.Parse(time.RFC3339Nano, b["startedAt"].(string))
		end, err2 := time.Parse(time.RFC3339Nano, b["finishedAt"].(string))
		if err1 != nil || err2 != nil {
			t.Fatalf("build %s: startedAt %v, finishedAt %v", id, b["startedAt"], b["finishedAt"])
		}
		spans = append(spans, span{start, end})
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start.Compare(b.start) })
	for i := 1; i < len(spans); i++ {
		if spans[i].start.Before(spans[i-1].end) {
			t.Errorf("a build started at %v, before the one before it finished (%v): its wait for a host counted as running",
				spans[i].start, spans[i-1].end)
		}
	}
}

// TestABuildPastItsTimeLimitFailsOnAWSLocal: KILN_BUILD_TIMEOUT holds on a CodeBuild host to the
// second, as on kiln serve (whose CodeBuild timeout is in whole minutes): the host stops the build
// at its limit and it fails with "time limit".
func TestABuildPastItsTimeLimitFailsOnAWSLocal(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.AWSLocal, func(c *serve.Config) { c.BuildTimeout = 3 * time.Second })
	pid := w.AddShooter(t)
	w.Shooter.Commit("slow", "A very slow cook", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=300\n"})
	sid := w.AddSetting(t, pid, map[string]any{"branch": "slow"})["id"].(string)
	id := w.Trigger(t, pid, sid, "")
	b := w.WaitEnded(t, id)
	if b["status"] != "failed" || b["failureReason"] != "time limit" {
		t.Fatalf("build past its limit: %v (%v)\nlog:\n%s", b["status"], b["failureReason"], w.LogText(t, id))
	}
	if log := w.LogText(t, id); !strings.Contains(log, "ran longer than its time limit of 3s") {
		t.Errorf("the log does not say why the build stopped:\n%s", log)
	}
	start, _ := time.Parse(time.RFC3339Nano, b["startedAt"].(string))
	end, _ := time.Parse(time.RFC3339Nano, b["finishedAt"].(string))
	if ran := end.Sub(start); ran > 3*time.Second+10*time.Second {
		t.Errorf("the build ran %v past a 3 s limit", ran)
	}
}
