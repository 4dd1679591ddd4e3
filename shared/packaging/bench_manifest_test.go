//go:build unix

package packaging

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkPackagingManifest measures what recording the manifest adds to packaging: TarGz and
// TarGzManifest package the same generated staged build, alternately, several times each, in
// this process and to io.Discard (the tree is in the page cache after the first run), and the
// ratio of their median times is printed (goal: under 1.05). To run in a few seconds the tree is
// BenchmarkPackaging's staged build with its containers and executables 32 times smaller (about
// 75 MB) but all of its 5,000 small files: the manifest's cost is per file, so this smaller tree
// overstates the ratio of the full 1.5 GB build.
func BenchmarkPackagingManifest(b *testing.B) {
	src := filepath.Join(b.TempDir(), benchTop)
	generateStagedBuild(b, src, 32)
	srcBytes, srcFiles := treeSize(b, src)
	const rounds = 5
	var plain, withManifest []time.Duration
	for range rounds {
		for _, manifest := range []bool{false, true} {
			t0 := time.Now()
			var err error
			if manifest {
				var files int
				_, list, e := TarGzManifest(b.Context(), src, benchTop, io.Discard)
				files, err = len(list), e
				if err == nil && files != srcFiles {
					b.Fatalf("manifest of %d files, the tree has %d", files, srcFiles)
				}
				withManifest = append(withManifest, time.Since(t0))
			} else {
				_, err = TarGz(b.Context(), src, benchTop, io.Discard)
				plain = append(plain, time.Since(t0))
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	median := func(d []time.Duration) time.Duration {
		slices.SortFunc(d, cmp.Compare)
		return d[len(d)/2]
	}
	p, m := median(plain), median(withManifest)
	ratio := float64(m) / float64(p)
	fmt.Printf("\nmanifest recording on %d files, %.0f MB (median of %d runs each): TarGz %v, TarGzManifest %v, ratio %.3f (goal < 1.05)\n\n",
		srcFiles, float64(srcBytes)/1e6, rounds, p.Round(time.Millisecond), m.Round(time.Millisecond), ratio)
	b.ReportMetric(ratio, "manifest-ratio")
}
