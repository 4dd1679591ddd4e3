package delivery

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/outbound"
	"github.com/kilnbuild/kiln/shared/tcptest"
)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

func client() *http.Client { return outbound.NewClient(outbound.Config{Allow: loopback}) }

// receiver starts a loopback receiver that counts requests and then runs h.
func receiver(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// answer reads the whole request, then answers with status.
func answer(status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(status)
	}
}

// artifact serves data as the artifact and counts how often it was opened.
func artifact(data []byte, opens *atomic.Int32) func() (io.ReadCloser, int64, error) {
	return func() (io.ReadCloser, int64, error) {
		if opens != nil {
			opens.Add(1)
		}
		return io.NopCloser(bytes.NewReader(data)), int64(len(data)), nil
	}
}

func randomBytes(t testing.TB, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

var testMeta = Metadata{BuildID: "b123", ProjectID: "p456", Platform: "Linux", BuildType: "Shipping",
	UEVersion: "5.3.2", Branch: "main", Commit: "0123456789abcdef"}

// received is what the receiver saw of one request.
type received struct {
	authorization, contentType string
	contentLength              int64
	transferEncoding           []string
	parts                      []part
	err                        error
}

type part struct {
	name, filename, contentType, disposition string
	body                                     []byte
	md5                                      [md5.Size]byte
	size                                     int64
}

// parse reads the request as multipart/form-data.
func parse(r *http.Request) received {
	got := received{authorization: r.Header.Get("Authorization"), contentType: r.Header.Get("Content-Type"),
		contentLength: r.ContentLength, transferEncoding: r.TransferEncoding}
	mr, err := r.MultipartReader()
	if err != nil {
		got.err = err
		return got
	}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return got
		}
		if err != nil {
			got.err = err
			return got
		}
		pp := part{name: p.FormName(), filename: p.FileName(), contentType: p.Header.Get("Content-Type"),
			disposition: p.Header.Get("Content-Disposition")}
		h := md5.New()
		var keep bytes.Buffer
		w := io.Writer(h)
		if pp.name == "metadata" {
			w = io.MultiWriter(h, &keep)
		}
		pp.size, got.err = io.Copy(w, p)
		pp.body = keep.Bytes()
		copy(pp.md5[:], h.Sum(nil))
		got.parts = append(got.parts, pp)
		if got.err != nil {
			return got
		}
	}
}

func TestDeliverRequest(t *testing.T) {
	data := randomBytes(t, 4<<20+123)
	var got received
	srv, hits := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		got = parse(r)
		w.WriteHeader(http.StatusNoContent)
	})
	auth := `Bearer s3cr3t-Tok3n, realm="kiln"`
	res := Deliver(context.Background(), client(), Delivery{URL: srv.URL + "/upload?x=1", Authorization: auth,
		Metadata: testMeta, Artifact: artifact(data, nil), BuildID: "b123"})
	if want := (Result{Succeeded: true, Status: 204}); res != want {
		t.Fatalf("result %+v, want %+v", res, want)
	}
	if hits.Load() != 1 || got.err != nil {
		t.Fatalf("%d requests, parse error %v", hits.Load(), got.err)
	}
	if got.authorization != auth {
		t.Errorf("Authorization %q, want %q", got.authorization, auth)
	}
	if mt, params, _ := mime.ParseMediaType(got.contentType); mt != "multipart/form-data" || params["boundary"] == "" {
		t.Errorf("Content-Type %q", got.contentType)
	}
	if got.contentLength <= int64(len(data)) || len(got.transferEncoding) != 0 {
		t.Errorf("Content-Length %d, Transfer-Encoding %v; want a length and no chunked encoding", got.contentLength, got.transferEncoding)
	}
	if len(got.parts) != 2 {
		t.Fatalf("%d parts, want 2", len(got.parts))
	}
	meta, art := got.parts[0], got.parts[1]
	if meta.name != "metadata" || meta.contentType != "application/json" || meta.disposition != `form-data; name="metadata"` || meta.filename != "" {
		t.Errorf("first part %q %q %q", meta.name, meta.contentType, meta.disposition)
	}
	var m map[string]any
	if err := json.Unmarshal(meta.body, &m); err != nil {
		t.Fatal(err)
	}
	wantMeta := map[string]any{"buildId": "b123", "projectId": "p456", "platform": "Linux", "buildType": "Shipping",
		"ueVersion": "5.3.2", "branch": "main", "commit": "0123456789abcdef"}
	if !reflect.DeepEqual(m, wantMeta) {
		t.Errorf("metadata %v, want %v", m, wantMeta)
	}
	if art.name != "artifact" || art.filename != "b123.tar.gz" || art.contentType != "application/gzip" ||
		art.disposition != `form-data; name="artifact"; filename="b123.tar.gz"` {
		t.Errorf("second part %q %q %q %q", art.name, art.filename, art.contentType, art.disposition)
	}
	if art.size != int64(len(data)) || art.md5 != md5.Sum(data) {
		t.Errorf("artifact: %d bytes, md5 %x; sent %d bytes, md5 %x", art.size, art.md5, len(data), md5.Sum(data))
	}
}

func TestDeliverNoAuthorization(t *testing.T) {
	var auth []string
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Values("Authorization")
		answer(200)(w, r)
	})
	res := Deliver(context.Background(), client(), Delivery{URL: srv.URL, Metadata: testMeta, Artifact: artifact([]byte("x"), nil)})
	if !res.Succeeded || len(auth) != 0 {
		t.Errorf("result %+v, Authorization %q", res, auth)
	}
}

func TestDeliverRedirectNotFollowed(t *testing.T) {
	target, targetHits := receiver(t, answer(204))
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		http.Redirect(w, r, target.URL+"/elsewhere", http.StatusFound)
	})
	res := Deliver(context.Background(), client(), Delivery{URL: srv.URL, Metadata: testMeta, Artifact: artifact([]byte("x"), nil)})
	if want := (Result{Error: "redirect (302) not followed", Status: 302, RetryAfter: -1}); res != want {
		t.Errorf("result %+v, want %+v", res, want)
	}
	if targetHits.Load() != 0 {
		t.Errorf("the redirect target got %d requests", targetHits.Load())
	}
}

func TestDeliverAddressNotAllowed(t *testing.T) {
	srv, hits := receiver(t, answer(204))
	for name, c := range map[string]*http.Client{"no allow": outbound.NewClient(outbound.Config{}), "nil client": nil} {
		res := Deliver(context.Background(), c, Delivery{URL: srv.URL, Metadata: testMeta, Artifact: artifact([]byte("x"), nil)})
		if want := (Result{Error: "address not allowed", RetryAfter: -1}); res != want {
			t.Errorf("%s: result %+v, want %+v", name, res, want)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("the receiver got %d requests", hits.Load())
	}
}

func TestDeliverConnectionRefused(t *testing.T) {
	addr := tcptest.ClosedAddr(t)
	res := Deliver(context.Background(), client(), Delivery{URL: "http://" + addr + "/", Metadata: testMeta,
		Artifact: artifact([]byte("x"), nil)})
	if want := (Result{Error: "network error", Retry: true, RetryAfter: -1}); res != want {
		t.Errorf("result %+v, want %+v", res, want)
	}
}

// TestDeliverHangUpMidBody: a receiver that drops the connection halfway through the artifact.
func TestDeliverHangUpMidBody(t *testing.T) {
	srv, hits := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.CopyN(io.Discard, r.Body, 1<<20)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		conn.Close()
	})
	res := Deliver(context.Background(), client(), Delivery{URL: srv.URL, Metadata: testMeta,
		Artifact: artifact(randomBytes(t, 8<<20), nil)})
	if want := (Result{Error: "network error", Retry: true, RetryAfter: -1}); res != want {
		t.Errorf("result %+v, want %+v", res, want)
	}
	if hits.Load() != 1 {
		t.Errorf("%d requests, want 1", hits.Load())
	}
}

func TestDeliverArtifactProblems(t *testing.T) {
	srv, _ := receiver(t, answer(204))
	tests := map[string]func() (io.ReadCloser, int64, error){
		"open fails": func() (io.ReadCloser, int64, error) { return nil, 0, errors.New("gone") },
		"short":      func() (io.ReadCloser, int64, error) { return io.NopCloser(bytes.NewReader(make([]byte, 10))), 20, nil },
		"read fails": func() (io.ReadCloser, int64, error) {
			return io.NopCloser(io.MultiReader(bytes.NewReader(make([]byte, 10)), iotestErrReader{})), 20, nil
		},
	}
	for name, open := range tests {
		res := Deliver(context.Background(), client(), Delivery{URL: srv.URL, Metadata: testMeta, Artifact: open})
		if want := (Result{Error: "artifact could not be read", Retry: true, RetryAfter: -1}); res != want {
			t.Errorf("%s: result %+v, want %+v", name, res, want)
		}
	}
}

type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errors.New("disk error") }

func TestDeliverInvalidAddress(t *testing.T) {
	var opens atomic.Int32
	for _, u := range []string{"", "ftp://example.com/x", "http://", "::bad", "file:///etc/passwd"} {
		res := Deliver(context.Background(), client(), Delivery{URL: u, Metadata: testMeta, Artifact: artifact([]byte("x"), &opens)})
		if want := (Result{Error: "invalid address"}); res != want {
			t.Errorf("%q: result %+v, want %+v", u, res, want)
		}
	}
	if opens.Load() != 0 {
		t.Errorf("the artifact was opened %d times", opens.Load())
	}
}

// TestDeliverCancelled: an attempt cut off by its context fails as cancelled, worth another.
func TestDeliverCancelled(t *testing.T) {
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select { // the receiver does not answer before the sender gives up
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	res := Deliver(ctx, client(), Delivery{URL: srv.URL, Metadata: testMeta, Artifact: artifact([]byte("x"), nil)})
	if want := (Result{Error: "delivery cancelled", Retry: true, RetryAfter: -1}); res != want || time.Since(start) > 10*time.Second {
		t.Errorf("result %+v after %v, want %+v", res, time.Since(start), want)
	}
}
