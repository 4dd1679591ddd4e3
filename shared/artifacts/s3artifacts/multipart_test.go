package s3artifacts_test

import (
	"bytes"
	"crypto/md5"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/artifacts/s3artifacts"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// putPart PUTs body to a presigned part URL, as a build host does (no AWS credentials), and
// returns the ETag or the status.
func putPart(t *testing.T, url string, body []byte) (etag string, status int) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Header.Get("ETag"), resp.StatusCode
}

// TestPresignedMultipartUpload: parts PUT to presigned URLs by someone without credentials make
// the object once completed; a URL works only for its key and upload, and an abort leaves nothing.
func TestPresignedMultipartUpload(t *testing.T) {
	ctx := t.Context()
	bucket := newBucket(t)
	s := s3artifacts.New(minio.Client(), s3artifacts.Location{Bucket: bucket, Prefix: "p"}, s3artifacts.Options{})
	const key = "k1/b1.tar.gz"
	first := bytes.Repeat([]byte("a"), 5<<20) // S3's smallest part but the last
	last := []byte("the end")

	id, err := s.CreateUpload(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	var parts []artifacts.UploadedPart
	for i, body := range [][]byte{first, last} {
		url, err := s.PresignPart(ctx, key, id, int32(i+1), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		etag, status := putPart(t, url, body)
		if status != http.StatusOK || etag == "" {
			t.Fatalf("PUT part %d: status %d, etag %q", i+1, status, etag)
		}
		parts = append(parts, artifacts.UploadedPart{Number: int32(i + 1), ETag: etag})
	}
	// A part URL signed for the key does not work after its signature was changed to another key.
	url, err := s.PresignPart(ctx, key, id, 3, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, status := putPart(t, strings.Replace(url, "/k1/b1.tar.gz", "/k1/other.tar.gz", 1), []byte("x")); status != http.StatusForbidden {
		t.Errorf("PUT with the URL of another key: status %d, want 403", status)
	}
	if err := s.CompleteUpload(ctx, key, id, parts); err != nil {
		t.Fatal(err)
	}
	size, err := s.Stat(ctx, key)
	if err != nil || size != int64(len(first)+len(last)) {
		t.Fatalf("Stat = %d, %v; want %d", size, err, len(first)+len(last))
	}
	obj, err := s.Open(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	h := md5.New()
	_, err = io.Copy(h, obj)
	obj.Close()
	want := md5.Sum(append(append([]byte{}, first...), last...))
	if err != nil || !bytes.Equal(h.Sum(nil), want[:]) {
		t.Fatalf("object content differs (err %v)", err)
	}

	// An aborted upload leaves no object and no upload.
	id2, err := s.CreateUpload(ctx, "k1/b2.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	url, err = s.PresignPart(ctx, "k1/b2.tar.gz", id2, 1, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, status := putPart(t, url, []byte("partial")); status != http.StatusOK {
		t.Fatalf("PUT: %d", status)
	}
	if err := s.AbortUpload(ctx, "k1/b2.tar.gz", id2); err != nil {
		t.Fatal(err)
	}
	if err := s.AbortUpload(ctx, "k1/b2.tar.gz", id2); err != nil {
		t.Errorf("abort again: %v", err)
	}
	if _, err := s.Stat(ctx, "k1/b2.tar.gz"); !kiln.IsCode(err, kiln.ENotFound) {
		t.Errorf("Stat of the aborted upload's key: %v, want not found", err)
	}
	keys, uploads := objects(t, bucket)
	if len(keys) != 1 || len(uploads) != 0 {
		t.Errorf("objects %v, uploads %v; want only the completed one", keys, uploads)
	}
	// Keys are checked as everywhere.
	if _, err := s.CreateUpload(ctx, "../escape"); err == nil {
		t.Error("CreateUpload accepted an invalid key")
	}
}
