package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
)

// BenchmarkBuildSandboxCost measures trigger → complete of a build on the stand-in engine, with
// builds run unconfined (KILN_SANDBOX=off, the baseline) and in the bubblewrap sandbox, the two
// interleaved in the same run. Times are the service's own (the build's createdAt to its
// finishedAt). Goal: the sandbox adds < 50 ms per build.
func BenchmarkBuildSandboxCost(b *testing.B) {
	type side struct {
		w        *e2e.World
		pid, sid string
		took     []time.Duration
	}
	setup := func(mode string) *side {
		w := e2e.NewWorld(b, e2e.Serve, func(c *serve.Config) { c.Sandbox = mode })
		pid := w.AddShooter(b)
		sid := w.AddSetting(b, pid, nil)["id"].(string)
		return &side{w: w, pid: pid, sid: sid}
	}
	build := func(s *side) {
		id := s.w.Trigger(b, s.pid, s.sid, "")
		bd := s.w.WaitEnded(b, id)
		if bd["status"] != "complete" {
			b.Fatalf("build: %v", bd)
		}
		created, _ := time.Parse(time.RFC3339Nano, bd["createdAt"].(string))
		finished, _ := time.Parse(time.RFC3339Nano, bd["finishedAt"].(string))
		s.took = append(s.took, finished.Sub(created))
	}
	off, on := setup("off"), setup("bwrap")
	build(off) // the first build clones the repository; later ones fetch
	build(on)
	off.took, on.took = nil, nil
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		build(off)
		build(on)
	}
	b.StopTimer()
	mOff, mOn := median(off.took), median(on.took)
	b.ReportMetric(float64(mOff.Microseconds())/1000, "ms/build-unconfined")
	b.ReportMetric(float64(mOn.Microseconds())/1000, "ms/build-sandboxed")
	b.ReportMetric(float64((mOn-mOff).Microseconds())/1000, "ms-added/build")
	b.ReportMetric(float64(mOn)/float64(mOff), "sandboxed/unconfined")
	fmt.Printf("sandbox cost: trigger → complete median %v unconfined, %v sandboxed (%+v, ×%.2f) over %d builds each\n",
		mOff, mOn, mOn-mOff, float64(mOn)/float64(mOff), len(off.took))
}
