//go:build linux

package buildcache

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/nofollow"
)

// childEnv (the archive) and childRootEnv (where to restore it) make the test binary restore an
// archive and print its peak RSS instead of testing.
const (
	childEnv     = "KILN_BUILDCACHE_RESTORE_CHILD"
	childRootEnv = "KILN_BUILDCACHE_RESTORE_ROOT"
)

func TestMain(m *testing.M) {
	if v := os.Getenv(childEnv); v != "" {
		os.Exit(restoreChild(v, os.Getenv(childRootEnv)))
	}
	os.Exit(m.Run())
}

func restoreChild(archive, root string) int {
	f, err := os.Open(archive)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer f.Close()
	dir, err := nofollow.Open(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer dir.Close()
	st, err := Read(context.Background(), f, dir, DefaultDirs)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			fmt.Printf("%s bytes=%d\n", strings.Join(strings.Fields(line), " "), st.Bytes)
		}
	}
	return 0
}

// BenchmarkRestorePeakMemory restores a cache of 2 GiB of files in a child process and reports
// its peak resident memory (goal: under 200 MB).
func BenchmarkRestorePeakMemory(b *testing.B) {
	benchEnabled(b)
	dir := b.TempDir()
	src := filepath.Join(dir, "src")
	size := generateTree(b, src, 2<<30)
	archive := filepath.Join(dir, "cache.tar.zst")
	f, err := os.Create(archive)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := Write(b.Context(), f, opened(b, src), DefaultDirs); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.RemoveAll(src); err != nil { // room for the restore
		b.Fatal(err)
	}
	dst := filepath.Join(dir, "dst")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		b.Fatal(err)
	}
	var peakKB int64
	b.ResetTimer()
	for b.Loop() {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), childEnv+"="+archive, childRootEnv+"="+dst)
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("restore child: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), fmt.Sprintf("bytes=%d", size)) {
			b.Fatalf("restore child restored other than %d bytes: %s", size, out)
		}
		// The child's own VmHWM: the rusage Maxrss that wait4 reports is no use here, since Linux
		// counts in it the parent's memory, which the child shared until exec.
		var kb int64
		if _, err := fmt.Sscanf(string(out), "VmHWM: %d kB", &kb); err != nil {
			b.Fatalf("restore child printed %q: %v", out, err)
		}
		peakKB = max(peakKB, kb)
	}
	b.StopTimer()
	b.ReportMetric(float64(peakKB)*1024/1e6, "peak_RSS_MB")
	b.ReportMetric(float64(size)/(1<<30), "restored_GiB")
}
