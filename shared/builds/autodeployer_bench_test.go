package builds

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/delivery/deliverytest"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// BenchmarkDeliveryFairness measures organization B's delivery latency (from queued to delivered)
// at the 99th percentile while organization A's receiver hangs, against the same with A absent,
// and reports the ratio (goal ≤ 1.2). Each run queues A's backlog first (twice the workers), then
// B's deliveries one after another. Run with KILN_BENCH_DELIVERY=1 (make bench).
func BenchmarkDeliveryFairness(b *testing.B) {
	if os.Getenv("KILN_BENCH_DELIVERY") != "1" {
		b.Skip("set KILN_BENCH_DELIVERY=1 to run")
	}
	const deliveriesOfB = 200
	absent := fairnessP99(b, false, deliveriesOfB)
	hanging := fairnessP99(b, true, deliveriesOfB)
	ratio := float64(hanging) / float64(absent)
	b.ReportMetric(float64(absent.Microseconds())/1000, "p99-ms-A-absent")
	b.ReportMetric(float64(hanging.Microseconds())/1000, "p99-ms-A-hanging")
	b.ReportMetric(ratio, "ratio")
	b.Logf("B's delivery latency p99: %v with A absent, %v while A's receiver hangs: %.2fx (goal <= 1.2x)", absent, hanging, ratio)
}

// fairnessP99 runs B's deliveries one at a time through a running AutoDeployer, with or without A's
// hanging backlog, and returns their latency p99.
func fairnessP99(b *testing.B, withA bool, n int) time.Duration {
	w := newDeliveryWorld(b)
	w.now = time.Time{} // the real clock
	// B has one delivery at a time: each request to its receiver is the one being timed.
	delivered := make(chan struct{}, n)
	fine := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.WriteHeader(http.StatusNoContent)
		delivered <- struct{}{}
	}))
	defer fine.Close()
	d := w.deliverer()
	d.Now = nil
	d.Workers = 4
	if withA {
		hang := deliverytest.NewHangingReceiver(b)
		setA := w.org(b, hang.URL)
		for range 2 * d.Workers {
			w.build(b, setA)
		}
	}
	setB := w.org(b, fine.URL)
	ctx, cancel := context.WithCancel(context.Background())
	var stopped sync.WaitGroup
	stopped.Go(func() { d.Run(ctx) })
	defer func() { cancel(); stopped.Wait() }()
	if withA {
		time.Sleep(200 * time.Millisecond) // A's attempts are under way and hanging
	}
	var lat []time.Duration
	for range n {
		bb := w.build(b, setB)
		start := time.Now()
		d.Notify()
		<-delivered
		lat = append(lat, time.Since(start))
		// The outcome is recorded after the answer: wait for it, so B has one delivery at a time.
		for w.get(b, bb).AutoDeployStatus != kiln.AutoDeploySucceeded {
			time.Sleep(100 * time.Microsecond)
		}
	}
	slices.Sort(lat)
	return lat[(len(lat)*99)/100-1]
}
