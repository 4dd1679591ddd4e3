//go:build unix

package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkDeliver delivers a generated 2 GiB artifact on disk to a loopback receiver that
// discards it, in a child process (TestDeliverHelperProcess) so that its peak RSS can be read,
// beside curl -F posting the same file to the same receiver. Each runs three times, alternating;
// the median is reported. Target: ≥ 0.9× curl's throughput, peak RSS < 64 MB. It runs only with
// KILN_BENCH_DELIVERY=1.
func BenchmarkDeliver(b *testing.B) {
	if os.Getenv("KILN_BENCH_DELIVERY") != "1" {
		b.Skip("set KILN_BENCH_DELIVERY=1 to run: it writes a 2 GiB file (needs 2 GiB of free disk in $TMPDIR)")
	}
	const size = 2 << 30
	dir := b.TempDir()
	file := filepath.Join(dir, "b123.tar.gz")
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.CopyN(f, rand.NewChaCha8([32]byte{'k'}), size); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	metaFile := filepath.Join(dir, "metadata.json")
	meta, _ := json.Marshal(testMeta)
	if err := os.WriteFile(metaFile, meta, 0o600); err != nil {
		b.Fatal(err)
	}
	syscall.Sync()

	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		got.Store(n)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	type row struct{ secs, rssMB []float64 }
	run := func(r *row, cmd *exec.Cmd) {
		cmd.Stderr = os.Stderr
		got.Store(0)
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%v: %v", cmd.Args, err)
		}
		r.secs = append(r.secs, time.Since(t0).Seconds())
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			r.rssMB = append(r.rssMB, float64(ru.Maxrss)/1024) // KiB on Linux
		}
		if got.Load() < size {
			b.Fatalf("%s: the receiver got %d bytes", cmd.Args[0], got.Load())
		}
	}
	var kiln, curl row
	_, err = exec.LookPath("curl")
	haveCurl := err == nil
	b.ResetTimer()
	for range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDeliverHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "KILN_DELIVERY_HELPER="+file+"\n"+srv.URL)
		run(&kiln, cmd)
		if haveCurl {
			run(&curl, exec.Command("curl", "-sS", "--fail", "-o", "/dev/null",
				"-F", "metadata=<"+metaFile+";type=application/json",
				"-F", "artifact=@"+file+";type=application/gzip", srv.URL))
		}
	}
	b.StopTimer()
	median := func(v []float64) float64 { v = slices.Clone(v); slices.Sort(v); return v[len(v)/2] }
	mbps := func(secs float64) float64 { return size / (1 << 20) / secs }
	k := mbps(median(kiln.secs))
	b.ReportMetric(k, "MB/s")
	b.ReportMetric(median(kiln.rssMB), "peak-RSS-MB")
	fmt.Printf("\ndelivery of a 2 GiB artifact over loopback (median of 3, whole process):\n")
	fmt.Printf("  delivery.Deliver %6.0f MB/s  peak RSS %5.1f MB  (runs %s)\n", k, median(kiln.rssMB), fmtSecs(kiln.secs))
	if haveCurl {
		c := mbps(median(curl.secs))
		fmt.Printf("  curl -F         %6.0f MB/s  peak RSS %5.1f MB  (runs %s)\n", c, median(curl.rssMB), fmtSecs(curl.secs))
		fmt.Printf("  Deliver = %.2fx curl (target ≥ 0.9x), RSS target < 64 MB\n", k/c)
		b.ReportMetric(k/c, "x-curl")
	} else {
		fmt.Printf("  curl -F         skipped: curl not installed\n")
	}
}

func fmtSecs(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("%.2fs", x)
	}
	return strings.Join(s, " ")
}

// TestDeliverHelperProcess is the child process of BenchmarkDeliver: it delivers one file. It
// does nothing in a normal test run.
func TestDeliverHelperProcess(t *testing.T) {
	args := strings.Split(os.Getenv("KILN_DELIVERY_HELPER"), "\n")
	if len(args) != 2 {
		t.Skip("the child process of BenchmarkDeliver")
	}
	file, url := args[0], args[1]
	res := Deliver(context.Background(), client(), Delivery{URL: url, Metadata: testMeta, BuildID: "b123",
		Artifact: func() (io.ReadCloser, int64, error) {
			f, err := os.Open(file)
			if err != nil {
				return nil, 0, err
			}
			st, err := f.Stat()
			if err != nil {
				f.Close()
				return nil, 0, err
			}
			return f, st.Size(), nil
		}})
	if !res.Succeeded {
		t.Fatalf("delivery failed: %+v", res)
	}
}
