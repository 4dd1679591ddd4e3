package client

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestFetchFollowsRedirectAndResumes: a signed URL that redirects (as in S3 mode, to a presigned
// URL) is followed with its Range, and a connection cut mid-way is resumed in the same call.
func TestFetchFollowsRedirectAndResumes(t *testing.T) {
	blob := make([]byte, 300_000)
	for i := range blob {
		blob[i] = byte(rand.IntN(256))
	}
	sum := md5.Sum(blob)
	var mu sync.Mutex
	var ranges []string
	cut := true
	mux := http.NewServeMux()
	mux.HandleFunc("/downloads/o/b.tar.gz", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Error("the token was sent with the signed URL")
		}
		http.Redirect(w, r, "/bucket/b.tar.gz?X-Amz-Signature=x", http.StatusFound)
	})
	mux.HandleFunc("/bucket/b.tar.gz", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ranges = append(ranges, r.Header.Get("Range"))
		first := cut
		cut = false
		mu.Unlock()
		if first { // half the bytes, then the connection is dropped
			w.Header().Set("Content-Length", "300000")
			w.Write(blob[:100_000])
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
		http.ServeContent(w, r, "b.tar.gz", time.Time{}, bytes.NewReader(blob))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	c, err := New(srv.URL, "kiln_token", nil)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "b.tar.gz")
	var last int64
	link := &DownloadLink{URL: srv.URL + "/downloads/o/b.tar.gz", SizeBytes: int64(len(blob)), ChecksumMD5: hex.EncodeToString(sum[:])}
	if err := c.Fetch(context.Background(), link, dst, func(done, total int64) { last = done }); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(dst)
	if err != nil || !bytes.Equal(got, blob) {
		t.Fatalf("downloaded %d bytes (%v), not the blob", len(got), err)
	}
	if len(ranges) != 2 || ranges[0] != "" || ranges[1] != "bytes=100000-" {
		t.Errorf("ranges %q", ranges)
	}
	if last != int64(len(blob)) {
		t.Errorf("progress ended at %d", last)
	}

	// A wrong size announced by the API: the file is deleted, nothing under the final name.
	dst2 := filepath.Join(t.TempDir(), "c.tar.gz")
	short := *link
	short.SizeBytes--
	var mismatch *MismatchError
	if err := c.Fetch(context.Background(), &short, dst2, nil); !errors.As(err, &mismatch) {
		t.Fatalf("err = %v, want a mismatch", err)
	}
	for _, p := range []string{dst2, dst2 + ".part"} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left (%v)", p, err)
		}
	}
}
