package bench

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// BenchmarkAWSLocalVsServe measures a build of the stand-in engine, trigger → running and
// trigger → complete (from the build's own createdAt, startedAt and finishedAt), on kiln serve
// and on kiln aws-local, the second against the first measured in the same run. On aws-local a
// build goes through the state machine on aws-local-stepfunctions, the task Lambda's claim, a
// CodeBuild stand-in starting `kiln agent run`, the host API and a multipart upload to MinIO.
//
//	go test -run '^$' -bench AWSLocalVsServe -benchtime 10x ./shared/compose/e2e/bench/
func BenchmarkAWSLocalVsServe(b *testing.B) {
	type figures struct{ running, complete time.Duration }
	measure := func(b *testing.B, d e2e.Deployment) figures {
		w := e2e.NewWorld(b, d)
		pid := w.AddShooter(b)
		sid := w.AddSetting(b, pid, nil)["id"].(string)
		var running, complete []time.Duration
		for i := 0; b.Loop(); i++ {
			id := w.Trigger(b, pid, sid, "")
			got := w.WaitEnded(b, id)
			if got["status"] != "complete" {
				b.Fatalf("build %d ended %v: %v", i, got["status"], got["failureReason"])
			}
			created, started, finished := stamp(b, got, "createdAt"), stamp(b, got, "startedAt"), stamp(b, got, "finishedAt")
			running, complete = append(running, started.Sub(created)), append(complete, finished.Sub(created))
		}
		f := figures{p50(running), p50(complete)}
		b.ReportMetric(float64(f.running.Microseconds())/1000, "running-p50-ms")
		b.ReportMetric(float64(f.complete.Microseconds())/1000, "complete-p50-ms")
		b.ReportMetric(0, "ns/op")
		return f
	}
	var serve, aws figures
	b.Run("serve", func(b *testing.B) { serve = measure(b, e2e.Serve) })
	b.Run("aws-local", func(b *testing.B) { aws = measure(b, e2e.AWSLocal) })
	if serve.complete == 0 || aws.complete == 0 {
		return
	}
	// A benchmark with sub-benchmarks reports nothing of its own: the comparison is printed.
	fmt.Printf("AWSLocalVsServe: trigger → running p50: kiln serve %v, aws-local %v (×%.1f); trigger → complete p50: kiln serve %v, aws-local %v (×%.1f)\n",
		serve.running.Round(time.Millisecond), aws.running.Round(time.Millisecond), ratio(aws.running, serve.running),
		serve.complete.Round(time.Millisecond), aws.complete.Round(time.Millisecond), ratio(aws.complete, serve.complete))
}

func stamp(b *testing.B, build map[string]any, field string) time.Time {
	s, _ := build[field].(string)
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		b.Fatalf("%s %q: %v", field, s, err)
	}
	return at
}

func p50(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}
