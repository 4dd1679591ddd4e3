package s3artifacts_test

import (
	"bufio"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kilnbuild/kiln/shared/artifacts/s3artifacts"
	"github.com/kilnbuild/kiln/shared/awslocal/minio/miniotest"
)

// BenchmarkUpload2GB uploads a 2 GiB artifact to MinIO through Store.Put (written in 1 MiB
// pieces with its MD5 computed in the same pass, as the packager does; part size as kiln serve
// sets it for the default KILN_ARTIFACT_MAX), beside MinIO's own client (mc cp) putting the same
// file in the same run, and the same Put without the MD5. Targets: ≥ 0.9× mc's throughput, peak
// RSS of Put < 200 MB.
func BenchmarkUpload2GB(b *testing.B) {
	if os.Getenv("KILN_BENCH_S3") != "1" {
		b.Skip("set KILN_BENCH_S3=1 to run (it writes a 2 GiB file and uploads it twice per round)")
	}
	minioBin, err := miniotest.Binary()
	if err != nil {
		b.Fatal(err)
	}
	mc := filepath.Join(filepath.Dir(minioBin), "mc")
	if _, err := os.Stat(mc); err != nil {
		b.Fatalf("MinIO's client is missing (%v): run scripts/install-minio.sh mc", err)
	}
	const size = 2 << 30
	dir := b.TempDir()
	path := filepath.Join(dir, "artifact.tar.gz")
	writeRandomFile(b, path, size)

	bucket := newBucket(b)
	store := s3artifacts.New(minio.Client(), s3artifacts.Location{Bucket: bucket}, s3artifacts.Options{PartSize: s3artifacts.PartSizeFor(50 << 30)})
	endpoint, _ := url.Parse(minio.Endpoint)
	mcEnv := append(os.Environ(), "MC_CONFIG_DIR="+filepath.Join(dir, "mc"),
		"MC_HOST_bench=http://"+url.QueryEscape(minio.User)+":"+url.QueryEscape(minio.Password)+"@"+endpoint.Host)
	remove := func(key string) {
		if _, err := minio.Client().DeleteObject(b.Context(), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
			b.Fatal(err)
		}
	}
	mcPut := func() time.Duration {
		t0 := time.Now()
		cmd := exec.Command(mc, "cp", "--quiet", path, "bench/"+bucket+"/mc.tar.gz")
		cmd.Env = mcEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("mc cp: %v\n%s", err, out)
		}
		d := time.Since(t0)
		remove("mc.tar.gz")
		return d
	}
	buf := make([]byte, 1<<20)
	var mcTime, kilnTime, plainTime time.Duration
	var peak int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 1 { // the two take turns going first
			mcTime += mcPut()
		}
		// The peak counts from here: what an earlier round left in the heap is given back.
		runtime.GC()
		debug.FreeOSMemory()
		resetPeakRSS(b)
		t1 := time.Now()
		var sum string
		err := store.Put(b.Context(), "k/b.tar.gz", func(w io.Writer) error {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			h := md5.New()
			if _, err := io.CopyBuffer(io.MultiWriter(h, w), onlyReader{f}, buf); err != nil {
				return err
			}
			sum = hex.EncodeToString(h.Sum(nil))
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		kilnTime += time.Since(t1)
		peak = max(peak, peakRSS(b))
		head, err := minio.Client().HeadObject(b.Context(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("k/b.tar.gz")})
		if err != nil || aws.ToInt64(head.ContentLength) != size || len(sum) != 32 {
			b.Fatalf("uploaded object: %v, %v", head, err)
		}
		remove("k/b.tar.gz")
		// The same upload without the MD5, to tell the upload's cost from the hash's.
		t2 := time.Now()
		err = store.Put(b.Context(), "k/plain.tar.gz", func(w io.Writer) error {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.CopyBuffer(w, onlyReader{f}, buf)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		plainTime += time.Since(t2)
		remove("k/plain.tar.gz")
		if i%2 == 0 {
			mcTime += mcPut()
		}
	}
	b.StopTimer()
	mb := float64(size) * float64(b.N) / (1 << 20)
	b.ReportMetric(mb/kilnTime.Seconds(), "put-MB/s")
	b.ReportMetric(mb/mcTime.Seconds(), "mc-MB/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
	fmt.Printf("\nupload of a 2 GiB artifact to MinIO on loopback, %d rounds: mc cp %.0f MB/s; Store.Put (MD5 in the same pass) %.0f MB/s = %.2fx mc (target ≥ 0.9x); "+
		"Store.Put without the MD5 %.0f MB/s = %.2fx mc; peak RSS during Put %.0f MB (target < 200 MB)\n",
		b.N, mb/mcTime.Seconds(), mb/kilnTime.Seconds(), mcTime.Seconds()/kilnTime.Seconds(),
		mb/plainTime.Seconds(), mcTime.Seconds()/plainTime.Seconds(), float64(peak)/(1<<20))
}

// onlyReader hides the file's WriterTo, so that the copy goes through the buffer as a
// packager's writes do.
type onlyReader struct{ io.Reader }

func writeRandomFile(b *testing.B, path string, size int64) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := io.CopyN(w, rand.NewChaCha8([32]byte{42}), size); err != nil { // incompressible, like a .tar.gz
		b.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// resetPeakRSS resets this process's VmHWM (Linux: "5" into /proc/self/clear_refs).
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Logf("cannot reset the peak RSS (%v); it counts from the start", err)
	}
}

// peakRSS is this process's VmHWM in bytes.
func peakRSS(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}
