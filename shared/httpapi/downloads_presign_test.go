package httpapi

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// presigningStore is an artifact store that presigns, as S3 does; presign stands in for S3.
type presigningStore struct {
	artifacts.Store
	presign func(key, filename string, lifetime time.Duration) (string, error)
}

func (p presigningStore) PresignGet(ctx context.Context, key, filename string, lifetime time.Duration) (string, error) {
	return p.presign(key, filename, lifetime)
}

// With a store that presigns, the signed URL answers 302 to the presigned URL (valid at most 15
// minutes and never past the signed URL's expiry), and no artifact byte comes from kiln.
func TestDownloadRedirectsToPresignedURL(t *testing.T) {
	f := newDownloadFixture(t)
	ctx, st, files, offset, created, b, a := f.ctx, f.st, f.files, f.offset, f.created, f.build, f.artifact
	if err := st.CreateArtifact(ctx, a); err != nil {
		t.Fatal(err)
	}
	type call struct {
		key, filename string
		lifetime      time.Duration
	}
	var calls []call
	gone := false
	arts := presigningStore{Store: files, presign: func(key, filename string, lifetime time.Duration) (string, error) {
		calls = append(calls, call{key, filename, lifetime})
		if gone {
			return "", kiln.NotFound("artifact")
		}
		return "https://storage.example/" + key + "?X-Amz-Signature=s", nil
	}}
	srv := f.serve(t, arts)
	d := downloadLink(t, srv.URL, b.ID, created.Token)

	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func() *http.Response {
		resp, err := noFollow.Get(d.URL)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	for _, tc := range []struct {
		at   time.Duration
		want time.Duration
	}{
		{0, 15 * time.Minute},                           // far from the signed URL's expiry
		{24*time.Hour - 5*time.Minute, 5 * time.Minute}, // never past it
	} {
		offset.Store(int64(tc.at))
		calls = nil
		resp := get()
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "https://storage.example/"+a.Key+"?X-Amz-Signature=s" {
			t.Fatalf("at +%v: %d, Location %q", tc.at, resp.StatusCode, resp.Header.Get("Location"))
		}
		if resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("Cache-Control %q, want no-store", resp.Header.Get("Cache-Control"))
		}
		if len(calls) != 1 || calls[0] != (call{a.Key, b.ID + ".tar.gz", tc.want}) {
			t.Errorf("at +%v: presigned %+v, want %v for %s.tar.gz", tc.at, calls, tc.want, b.ID)
		}
	}
	// An expired signed URL is refused before anything is presigned.
	offset.Store(int64(24*time.Hour + time.Second))
	calls = nil
	if resp := get(); resp.StatusCode != http.StatusForbidden || len(calls) != 0 {
		t.Errorf("expired: %d, %d presigns", resp.StatusCode, len(calls))
	}
	// An object gone from the storage (a record the janitor has yet to delete) is 404.
	offset.Store(0)
	gone = true
	if resp := get(); resp.StatusCode != http.StatusNotFound {
		t.Errorf("object gone: %d, want 404", resp.StatusCode)
	}
}
