package deliverytest

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// PeakHeap runs run and returns the largest HeapInuse seen while it ran, sampled every 5 ms
// after a garbage collection: what a streaming delivery holds in memory at most.
func PeakHeap(run func()) uint64 {
	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	run()
	close(stop)
	wg.Wait()
	return peak.Load()
}
