//go:build unix

package packaging

import (
	"cmp"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

const benchTop = "MyGame-Linux-Shipping"

// BenchmarkPackaging compares TarGz with tar -czf and tar -I pigz on a generated 1.5 GB staged
// build, each in its own process so that its peak RSS can be read. It runs only with
// KILN_BENCH_PACKAGING=1 (scripts/bench-packaging.sh).
func BenchmarkPackaging(b *testing.B) {
	if os.Getenv("KILN_BENCH_PACKAGING") != "1" {
		b.Skip("set KILN_BENCH_PACKAGING=1 to run: it generates a 1.5 GB staged build (needs ~3 GB of free disk in $TMPDIR) and takes a few minutes; scripts/bench-packaging.sh installs pigz and runs it")
	}
	work := b.TempDir()
	src := filepath.Join(work, benchTop)
	start := time.Now()
	generateStagedBuild(b, src, 1)
	srcBytes, srcFiles := treeSize(b, src)
	fmt.Printf("generated %s: %d files, %.2f GB in %.1fs\n", src, srcFiles, float64(srcBytes)/1e9, time.Since(start).Seconds())

	type row struct {
		method    string
		secs, cpu float64 // wall and CPU (user+system) seconds
		size      int64
		rssMB     float64
		note      string
	}
	run := func(method string, cmd *exec.Cmd, out string) row {
		syscall.Sync() // start each one with no dirty pages of the others to write back
		cmd.Stderr = os.Stderr
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s: %v", method, err)
		}
		r := row{method: method, secs: time.Since(t0).Seconds(), size: fileSize(b, out)}
		// Rusage of a waited-for process includes its reaped children (tar's gzip).
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			r.rssMB = float64(ru.Maxrss) / 1024 // KiB on Linux
			r.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		}
		return r
	}

	// TarGz runs in a child process (TestPackagingHelperProcess), three times, before, between
	// and after the others so that they all meet the same noise of a shared machine; the median
	// run is reported.
	var ours []string
	var runs []row
	runTarGz := func() {
		out := filepath.Join(work, "targz.tar.gz")
		resFile := filepath.Join(work, "targz.json")
		cmd := exec.Command(os.Args[0], "-test.run=^TestPackagingHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "KILN_PACKAGING_HELPER="+strings.Join([]string{src, out, resFile}, "\n"))
		runs = append(runs, run("packaging.TarGz", cmd, out))
		checkHelperResult(b, out, resFile)
		if ours == nil {
			ours = listArchive(b, out)
		}
		rmFile(b, out)
	}

	runTarGz()
	out := filepath.Join(work, "tar.tar.gz")
	base := run("tar -czf", exec.Command("tar", "-czf", out, "-C", work, benchTop), out)
	if theirs := listArchive(b, out); !slices.Equal(ours, theirs) {
		b.Errorf("TarGz archives %d entries, tar -czf %d, or different ones", len(ours), len(theirs))
	}
	rmFile(b, out)
	runTarGz()
	pigz := row{method: "tar -I pigz -cf", note: "skipped: pigz not installed (scripts/bench-packaging.sh installs it)"}
	if _, err := exec.LookPath("pigz"); err == nil {
		out = filepath.Join(work, "pigz.tar.gz")
		pigz = run(pigz.method, exec.Command("tar", "-I", "pigz", "-cf", out, "-C", work, benchTop), out)
		rmFile(b, out)
	}
	runTarGz()

	slices.SortFunc(runs, func(a, b row) int { return cmp.Compare(a.secs, b.secs) })
	tg := runs[1]
	for _, r := range runs {
		tg.rssMB = max(tg.rssMB, r.rssMB)
	}
	tg.note = fmt.Sprintf("median of %.1f, %.1f, %.1f s; RSS the most of the three", runs[0].secs, runs[1].secs, runs[2].secs)
	rows := []row{tg, base, pigz}

	fmt.Printf("\n%-18s %8s %8s %15s %10s %10s %8s %9s\n", "method", "seconds", "CPU s", "output bytes", "size/tar", "speed×tar", "MB/s in", "peak RSS")
	for _, r := range rows {
		if r.secs == 0 {
			fmt.Printf("%-18s %s\n", r.method, r.note)
			continue
		}
		fmt.Printf("%-18s %8.1f %8.1f %15d %9.4f× %9.1f× %8.0f %6.0f MB  %s\n", r.method, r.secs, r.cpu, r.size,
			float64(r.size)/float64(base.size), base.secs/r.secs, float64(srcBytes)/1e6/r.secs, r.rssMB, r.note)
	}
	fmt.Println()
	b.ReportMetric(tg.secs, "targz-s")
	b.ReportMetric(base.secs/tg.secs, "speed×tar")
	b.ReportMetric(float64(tg.size)/float64(base.size), "size/tar")
	b.ReportMetric(base.cpu/tg.cpu, "cpu×tar")
	b.ReportMetric(tg.rssMB, "peak-RSS-MB")
}

// TestPackagingHelperProcess is the child process of BenchmarkPackaging: it packages one tree
// and writes its Result as JSON. It does nothing in a normal test run.
func TestPackagingHelperProcess(t *testing.T) {
	args := strings.Split(os.Getenv("KILN_PACKAGING_HELPER"), "\n")
	if len(args) != 3 {
		t.Skip("the child process of BenchmarkPackaging")
	}
	src, out, resFile := args[0], args[1], args[2]
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	res, err := TarGz(context.Background(), src, filepath.Base(src), f)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	j, _ := json.Marshal(res)
	if err := os.WriteFile(resFile, j, 0o600); err != nil {
		t.Fatal(err)
	}
}

// checkHelperResult checks the child's Result against the file it wrote.
func checkHelperResult(b *testing.B, out, resFile string) {
	b.Helper()
	j, err := os.ReadFile(resFile)
	if err != nil {
		b.Fatal(err)
	}
	var res Result
	if err := json.Unmarshal(j, &res); err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	h := md5.New()
	n, err := io.Copy(h, f)
	if err != nil {
		b.Fatal(err)
	}
	if n != res.Size || hex.EncodeToString(h.Sum(nil)) != res.MD5 {
		b.Fatalf("Result %+v does not describe the file (%d bytes, md5 %x)", res, n, h.Sum(nil))
	}
}

// listArchive lists an archive with tar -tzf (which also checks it whole), sorted.
func listArchive(b *testing.B, path string) []string {
	b.Helper()
	out, err := exec.Command("tar", "-tzf", path).Output()
	if err != nil {
		b.Fatalf("tar -tzf %s: %v", path, err)
	}
	names := strings.Split(strings.TrimSpace(string(out)), "\n")
	slices.Sort(names)
	return names
}

func treeSize(b *testing.B, dir string) (bytes int64, files int) {
	b.Helper()
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			bytes += fi.Size()
			files++
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return bytes, files
}

func fileSize(b *testing.B, path string) int64 {
	b.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

func rmFile(b *testing.B, path string) {
	b.Helper()
	if err := os.Remove(path); err != nil {
		b.Fatal(err)
	}
}
