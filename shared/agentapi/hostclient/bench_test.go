package hostclient_test

import (
	"io"
	"runtime"
	"testing"

	"github.com/kilnbuild/kiln/shared/agentapi/hostclient"
)

// BenchmarkArtifactUploadMemory streams artifacts of 32 and 128 MiB through the host API to
// MinIO in parts of 5 MiB, 2 at a time. alloc-MiB/op is everything allocated in this process
// (host and host API) during one upload: about three parts whatever the artifact's size, never
// the artifact (measured on this machine: 15.9 MiB for 32 MiB, 17.6 MiB for 128 MiB).
//
//	go test -run '^$' -bench ArtifactUploadMemory -benchtime 1x ./shared/agentapi/hostclient
func BenchmarkArtifactUploadMemory(b *testing.B) {
	for _, size := range []int{32 << 20, 128 << 20} {
		b.Run(map[int]string{32 << 20: "32MiB", 128 << 20: "128MiB"}[size], func(b *testing.B) {
			s := newService(b)
			build, cred := s.claimed(b, s.project, s.setting)
			store := hostclient.NewArtifactStore(&hostclient.Client{BaseURL: s.api.URL, Credential: cred}, 2)
			key := s.orgID + "/" + build.ID + ".tar.gz"
			chunk := make([]byte, 64<<10)
			b.SetBytes(int64(size))
			b.ResetTimer()
			for range b.N {
				var before runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				err := store.Put(b.Context(), key, func(w io.Writer) error {
					for left := size; left > 0; left -= len(chunk) {
						if _, err := w.Write(chunk); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), "alloc-MiB/op")
			}
		})
	}
}
