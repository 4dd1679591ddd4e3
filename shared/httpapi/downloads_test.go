package httpapi

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestDownloadURLExpiresAfter24Hours checks the signed URL against the server's clock: it works
// until its expiry, is 403 after it, and a new URL can be asked for.
func TestDownloadURLExpiresAfter24Hours(t *testing.T) {
	f := newDownloadFixture(t)
	ctx, st, arts, offset, created, org, b, a := f.ctx, f.st, f.files, f.offset, f.created, f.org, f.build, f.artifact
	if err := arts.Put(ctx, a.Key, func(w io.Writer) error { _, err := io.WriteString(w, "tarball"); return err }); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateArtifact(ctx, a); err != nil {
		t.Fatal(err)
	}
	srv := f.serve(t, arts)
	d := downloadLink(t, srv.URL, b.ID, created.Token)
	if d.ExpiresAt != "2026-11-22T10:00:00.000Z" || d.SizeBytes != 7 {
		t.Fatalf("descriptor %+v", d)
	}
	get := func() (int, string) {
		resp, err := http.Get(d.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	offset.Store(int64(24*time.Hour - time.Second))
	if code, body := get(); code != 200 || body != "tarball" {
		t.Fatalf("just before expiry: %d %q", code, body)
	}
	offset.Store(int64(24*time.Hour + time.Second))
	if code, body := get(); code != 403 || !strings.Contains(body, `"error":"forbidden"`) {
		t.Fatalf("after expiry: %d %s", code, body)
	}
	// Once retention deleted the artifact, even a fresh link is 404.
	offset.Store(0)
	if err := st.DeleteArtifact(ctx, org, b.ID); err != nil {
		t.Fatal(err)
	}
	if code, _ := get(); code != 404 {
		t.Fatalf("deleted artifact: %d", code)
	}
}
