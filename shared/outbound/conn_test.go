package outbound

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// TestClientUploadsIntact posts bodies through bigWriteConn's two paths, a reader copied in big
// pieces and a file handed to the kernel, and checks the receiver gets every byte.
func TestClientUploadsIntact(t *testing.T) {
	data := make([]byte, 3<<20+17)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "body")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var got [md5.Size]byte
	var n int64
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		h := md5.New()
		n, _ = io.Copy(h, r.Body)
		copy(got[:], h.Sum(nil))
		w.WriteHeader(http.StatusNoContent)
	})
	c := NewClient(Config{Allow: loopback})
	for name, body := range map[string]func() io.Reader{
		"reader": func() io.Reader { return io.MultiReader(bytes.NewReader(data[:10]), bytes.NewReader(data[10:])) },
		"file": func() io.Reader {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, body())
		req.ContentLength = int64(len(data))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		resp.Body.Close()
		if n != int64(len(data)) || got != md5.Sum(data) {
			t.Errorf("%s: the receiver got %d bytes, md5 %x; sent %d, md5 %x", name, n, got, len(data), md5.Sum(data))
		}
	}
}
