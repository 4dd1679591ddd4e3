package buildcache

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// benchEnabled gates the benchmarks that write hundreds of MiB to disk (make bench sets it).
func benchEnabled(b *testing.B) {
	if os.Getenv("KILN_BENCH_CACHE") == "" {
		b.Skip("set KILN_BENCH_CACHE=1 to run (writes ~1 GB, or ~4 GB for the 2 GiB restore)")
	}
}

// compressible returns n bytes that compress about as well as object code and cooked data:
// tokens from a small vocabulary, with random numbers among them.
func compressible(rng *rand.Rand, n int) []byte {
	words := []string{"mov", "rax", "call", "Engine", "UObject", "FVector", "0x00000000", "push", "ret",
		"jmp", "Texture2D", "Material", "\x00\x00\x00\x00", "lea", "rdi", "Private", "Public", "\n"}
	var b bytes.Buffer
	b.Grow(n)
	for b.Len() < n {
		if rng.IntN(4) == 0 {
			fmt.Fprintf(&b, "%d ", rng.Uint32())
		} else {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
	}
	return b.Bytes()[:n]
}

func incompressible(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := rng.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// generateTree writes about total bytes under root/Intermediate and root/DerivedDataCache: half
// in many small files (1-64 KiB, in directories of 100), half in a few large ones (32 MiB);
// every other file compressible. It returns the bytes written.
func generateTree(tb testing.TB, root string, total int64) int64 {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var written int64
	write := func(name string, data []byte) {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			tb.Fatal(err)
		}
		written += int64(len(data))
	}
	content := func(i, n int) []byte {
		if i%2 == 0 {
			return compressible(rng, n)
		}
		return incompressible(rng, n)
	}
	dirs := []string{"Intermediate/Build/Linux/Game/Development", "DerivedDataCache/ddc"}
	for i := 0; written < total/2; i++ {
		write(fmt.Sprintf("%s/m%03d/f%05d.o", dirs[i%2], i/100, i), content(i, 1<<10+rng.IntN(63<<10)))
	}
	for i := 0; written < total; i++ {
		write(fmt.Sprintf("%s/big%02d.bin", dirs[i%2], i), content(i, 32<<20))
	}
	return written
}

// run times a shell pipeline.
func run(b *testing.B, script string) time.Duration {
	b.Helper()
	start := time.Now()
	out, err := exec.Command("bash", "-c", "set -euo pipefail; "+script).CombinedOutput()
	if err != nil {
		b.Fatalf("%s: %v\n%s", script, err, out)
	}
	return time.Since(start)
}

// BenchmarkSaveRestore compares Write and Read of a ~256 MiB tree with
// `tar -cf - | zstd -T0 -3` and `zstd -d | tar -x` of the same tree, in the same run.
func BenchmarkSaveRestore(b *testing.B) {
	benchEnabled(b)
	if _, err := exec.LookPath("zstd"); err != nil {
		b.Skip("no zstd binary to compare with (apt-get install zstd)")
	}
	dir := b.TempDir()
	src := filepath.Join(dir, "src")
	size := generateTree(b, src, 256<<20)
	ours, theirs := filepath.Join(dir, "ours.tar.zst"), filepath.Join(dir, "theirs.tar.zst")
	dst := filepath.Join(dir, "dst")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		b.Fatal(err)
	}
	var save, toolSave, restore, toolRestore time.Duration
	var oursSize, theirsSize int64
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		f, err := os.Create(ours)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Write(b.Context(), f, opened(b, src), DefaultDirs); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		save += time.Since(start)
		toolSave += run(b, fmt.Sprintf("tar -C %q -cf - %s | zstd -q -f -T0 -3 -o %q", src, "Intermediate DerivedDataCache", theirs))

		start = time.Now()
		f, err = os.Open(ours)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Read(b.Context(), f, opened(b, dst), DefaultDirs); err != nil {
			b.Fatal(err)
		}
		f.Close()
		restore += time.Since(start)
		// The tools' restore also starts by removing the previous contents, as Read does.
		toolRestore += run(b, fmt.Sprintf("cd %q && rm -rf Intermediate DerivedDataCache && zstd -q -d -c %q | tar -x -C %q", dst, theirs, dst))
	}
	b.StopTimer()
	for p, n := range map[string]*int64{ours: &oursSize, theirs: &theirsSize} {
		fi, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		*n = fi.Size()
	}
	mbps := func(d time.Duration) float64 { return float64(size) * float64(b.N) / d.Seconds() / 1e6 }
	b.ReportMetric(mbps(save), "save_MB/s")
	b.ReportMetric(mbps(toolSave), "tools_save_MB/s")
	b.ReportMetric(toolSave.Seconds()/save.Seconds(), "save_ratio")
	b.ReportMetric(mbps(restore), "restore_MB/s")
	b.ReportMetric(mbps(toolRestore), "tools_restore_MB/s")
	b.ReportMetric(toolRestore.Seconds()/restore.Seconds(), "restore_ratio")
	b.ReportMetric(float64(oursSize)/float64(size), "compressed_fraction")
	b.ReportMetric(float64(theirsSize)/float64(size), "tools_compressed_fraction")
}
