package delivery

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/kilnbuild/kiln/shared/delivery/deliverytest"
)

// genReader yields left bytes of pseudo-random data without holding them: a 64 KiB random block
// repeated.
type genReader struct {
	block []byte
	off   int
	left  int64
}

func newGenReader(size int64) *genReader {
	block := make([]byte, 64<<10)
	r := rand.NewChaCha8([32]byte{'k', 'i', 'l', 'n'})
	_, _ = r.Read(block)
	return &genReader{block: block, left: size}
}

func (g *genReader) Read(p []byte) (int, error) {
	if g.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > g.left {
		p = p[:g.left]
	}
	n := 0
	for n < len(p) {
		c := copy(p[n:], g.block[g.off:])
		n += c
		g.off = (g.off + c) % len(g.block)
	}
	g.left -= int64(n)
	return n, nil
}

// TestDeliverMemory delivers a 256 MiB artifact that exists only as a reader and checks that the
// heap stays small throughout: the body is streamed, never buffered whole.
func TestDeliverMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 256 MiB over loopback")
	}
	const size = 256 << 20
	var artBytes atomic.Int64
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		mr, err := r.MultipartReader()
		if err != nil {
			w.WriteHeader(400)
			return
		}
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			n, _ := io.Copy(io.Discard, p)
			if p.FormName() == "artifact" {
				artBytes.Store(n)
			}
		}
		w.WriteHeader(http.StatusNoContent)
	})

	var res Result
	peak := deliverytest.PeakHeap(func() {
		res = Deliver(context.Background(), client(), Delivery{URL: srv.URL, Metadata: testMeta, BuildID: "b123",
			Artifact: func() (io.ReadCloser, int64, error) { return io.NopCloser(newGenReader(size)), size, nil }})
	})
	if want := (Result{Succeeded: true, Status: 204}); res != want {
		t.Fatalf("result %+v, want %+v", res, want)
	}
	if artBytes.Load() != size {
		t.Errorf("the receiver got %d artifact bytes, want %d", artBytes.Load(), size)
	}
	t.Logf("peak HeapInuse %.1f MiB while delivering %d MiB", float64(peak)/(1<<20), size>>20)
	if peak >= 32<<20 {
		t.Errorf("peak HeapInuse %d bytes, want < 32 MiB", peak)
	}
}
