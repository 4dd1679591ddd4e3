package s3artifacts_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/artifacts/artifactstest"
	"github.com/kilnbuild/kiln/shared/artifacts/s3artifacts"
	"github.com/kilnbuild/kiln/shared/kiln"
)

func TestContract(t *testing.T) {
	artifactstest.Run(t, func(t *testing.T) artifacts.Store {
		return s3artifacts.New(minio.Client(), s3artifacts.Location{Bucket: newBucket(t)}, s3artifacts.Options{})
	})
}

func TestContractWithPrefix(t *testing.T) {
	bucket := newBucket(t)
	n := 0
	artifactstest.Run(t, func(t *testing.T) artifacts.Store {
		n++ // each store its own prefix in one bucket
		return s3artifacts.New(minio.Client(), s3artifacts.Location{Bucket: bucket, Prefix: fmt.Sprintf("kiln/p%d", n)}, s3artifacts.Options{})
	})
	// Objects live under the prefix only.
	out, err := minio.Client().ListObjectsV2(t.Context(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Contents) == 0 {
		t.Fatal("no objects in the bucket")
	}
	for _, o := range out.Contents {
		if !strings.HasPrefix(aws.ToString(o.Key), "kiln/p") {
			t.Errorf("object %s outside the prefix", aws.ToString(o.Key))
		}
	}
}

// objects lists the keys of the objects and of the unfinished multipart uploads in bucket.
func objects(t *testing.T, bucket string) (keys, uploads []string) {
	t.Helper()
	ctx := context.Background()
	out, err := minio.Client().ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	mp, err := minio.Client().ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range mp.Uploads {
		uploads = append(uploads, aws.ToString(u.Key))
	}
	return keys, uploads
}

const partSize = 5 << 20

// A Put that fails or is cancelled after parts were sent aborts its multipart upload: no object,
// no unfinished upload holding the parts, and the artifact stored before under the key is kept.
func TestFailedUploadLeavesNothing(t *testing.T) {
	boom := errors.New("packaging failed")
	for _, tc := range []struct {
		name string
		stop func(cancel context.CancelFunc) error // ends the write after two parts
		want error
	}{
		{"cancelled", func(cancel context.CancelFunc) error { cancel(); return nil }, context.Canceled},
		{"write error", func(context.CancelFunc) error { return boom }, boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bucket := newBucket(t)
			s := s3artifacts.New(minio.Client(), s3artifacts.Location{Bucket: bucket}, s3artifacts.Options{PartSize: partSize})
			if err := s.Put(t.Context(), "k/kept.tar.gz", func(w io.Writer) error { _, err := w.Write([]byte("kept")); return err }); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var during []string
			err := s.Put(ctx, "k/kept.tar.gz", func(w io.Writer) error {
				// Once the first byte of part 3 is taken, part 1 is sent and part 2 queued: the
				// multipart upload exists.
				if _, err := w.Write(artifactstest.Content(2*partSize+1, 7)); err != nil {
					return err
				}
				_, during = objects(t, bucket)
				return tc.stop(cancel)
			})
			if !errors.Is(err, tc.want) {
				t.Fatalf("Put = %v, want %v", err, tc.want)
			}
			if len(during) != 1 {
				t.Fatalf("multipart uploads while writing: %v, want one", during)
			}
			keys, uploads := objects(t, bucket)
			if len(keys) != 1 || keys[0] != "k/kept.tar.gz" || len(uploads) != 0 {
				t.Errorf("after the failed Put: objects %v, unfinished uploads %v; want only k/kept.tar.gz and none", keys, uploads)
			}
			obj, err := s.Open(t.Context(), "k/kept.tar.gz")
			if err != nil {
				t.Fatal(err)
			}
			defer obj.Close()
			if got, _ := io.ReadAll(obj); string(got) != "kept" {
				t.Errorf("the artifact stored before: %q, want kept", got)
			}
		})
	}
}

// partsInFlight is an HTTP client that holds each UploadPart request until a second one is in
// flight, so that an upload sending parts one at a time never completes.
type partsInFlight struct {
	mu       sync.Mutex
	inFlight int
	most     int
	second   chan struct{}
	once     sync.Once
}

func (p *partsInFlight) Do(r *http.Request) (*http.Response, error) {
	if !r.URL.Query().Has("partNumber") {
		return http.DefaultClient.Do(r)
	}
	p.mu.Lock()
	p.inFlight++
	p.most = max(p.most, p.inFlight)
	if p.inFlight >= 2 {
		p.once.Do(func() { close(p.second) })
	}
	p.mu.Unlock()
	defer func() { p.mu.Lock(); p.inFlight--; p.mu.Unlock() }()
	select {
	case <-p.second:
	case <-time.After(20 * time.Second):
		return nil, errors.New("no second part was sent while the first one was in flight")
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	return http.DefaultClient.Do(r)
}

func TestPartsAreSentInParallel(t *testing.T) {
	hc := &partsInFlight{second: make(chan struct{})}
	client := s3.New(minio.Client().Options(), func(o *s3.Options) { o.HTTPClient = hc })
	s := s3artifacts.New(client, s3artifacts.Location{Bucket: newBucket(t)}, s3artifacts.Options{PartSize: partSize, Concurrency: 3})
	data := artifactstest.Content(4*partSize+100, 8)
	if err := s.Put(t.Context(), "k/p.tar.gz", func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if hc.most < 2 {
		t.Errorf("at most %d parts in flight, want 2 or more", hc.most)
	}
	obj, err := s.Open(t.Context(), "k/p.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	if got, _ := io.ReadAll(obj); !bytes.Equal(got, data) {
		t.Errorf("read back %d bytes, not what was written", len(got))
	}
}

func TestPresignGet(t *testing.T) {
	s := s3artifacts.New(minio.Client(), s3artifacts.Location{Bucket: newBucket(t), Prefix: "arts"}, s3artifacts.Options{})
	data := artifactstest.Content(100_000, 9)
	if err := s.Put(t.Context(), "k/b.tar.gz", func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
		t.Fatal(err)
	}
	url, err := s.PresignGet(t.Context(), "k/b.tar.gz", "b123.tar.gz", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(url, "X-Amz-Expires=900&") {
		t.Errorf("presigned URL %s: want X-Amz-Expires=900 (an hour is cut to 15 minutes)", url)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(body, data) {
		t.Fatalf("GET presigned: %d, %d bytes (equal %v)", resp.StatusCode, len(body), bytes.Equal(body, data))
	}
	if cd := resp.Header.Get("Content-Disposition"); cd != `attachment; filename="b123.tar.gz"` {
		t.Errorf("Content-Disposition %q", cd)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/gzip" {
		t.Errorf("Content-Type %q", ct)
	}
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Range", "bytes=1000-1999")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(body, data[1000:2000]) {
		t.Errorf("ranged GET: %d, %d bytes (equal %v)", resp.StatusCode, len(body), bytes.Equal(body, data[1000:2000]))
	}
	// A deleted artifact has no URL.
	if err := s.Delete(t.Context(), "k/b.tar.gz"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PresignGet(t.Context(), "k/b.tar.gz", "b123.tar.gz", time.Minute); !kiln.IsCode(err, kiln.ENotFound) {
		t.Errorf("PresignGet of a deleted artifact = %v, want not_found", err)
	}
	if _, err := s.PresignGet(t.Context(), "../b.tar.gz", "b.tar.gz", time.Minute); !errors.Is(err, artifacts.ErrInvalidKey) {
		t.Errorf("PresignGet of a bad key = %v, want ErrInvalidKey", err)
	}
}

// MinIO checks the expiry of a presigned URL (as S3 does): one past it is refused.
func TestPresignedURLExpires(t *testing.T) {
	s := s3artifacts.New(minio.Client(), s3artifacts.Location{Bucket: newBucket(t)}, s3artifacts.Options{})
	if err := s.Put(t.Context(), "k/e.tar.gz", func(w io.Writer) error { _, err := w.Write([]byte("e")); return err }); err != nil {
		t.Fatal(err)
	}
	url, err := s.PresignGet(t.Context(), "k/e.tar.gz", "e.tar.gz", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond) // the URL was signed with a whole-second date, valid for 1 s
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "expired") {
		t.Errorf("GET of an expired presigned URL: %d %s, want 403 (expired)", resp.StatusCode, body)
	}
}

func TestListContract(t *testing.T) {
	artifactstest.RunList(t, func(t *testing.T) artifactstest.ListStore {
		return s3artifacts.New(minio.Client(), s3artifacts.Location{Bucket: newBucket(t)}, s3artifacts.Options{})
	})
}

// With a location prefix, keys are listed without it, and objects outside it are not listed.
func TestListContractWithPrefix(t *testing.T) {
	bucket := newBucket(t)
	n := 0
	artifactstest.RunList(t, func(t *testing.T) artifactstest.ListStore {
		n++
		other := s3artifacts.New(minio.Client(), s3artifacts.Location{Bucket: bucket, Prefix: fmt.Sprintf("kiln/q%d", n)}, s3artifacts.Options{})
		if err := other.Put(t.Context(), "k/a.tar.gz", func(w io.Writer) error { return nil }); err != nil {
			t.Fatal(err)
		}
		return s3artifacts.New(minio.Client(), s3artifacts.Location{Bucket: bucket, Prefix: fmt.Sprintf("kiln/p%d", n)}, s3artifacts.Options{})
	})
}
