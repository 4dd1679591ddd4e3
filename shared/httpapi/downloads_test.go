package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/artifacts/fsartifacts"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
)

// TestDownloadURLExpiresAfter24Hours checks the signed URL against the server's clock: it works
// until its expiry, is 403 after it, and a new URL can be asked for.
func TestDownloadURLExpiresAfter24Hours(t *testing.T) {
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "kiln.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	arts, err := fsartifacts.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	var offset atomic.Int64
	now := func() time.Time { return start.Add(time.Duration(offset.Load())) }
	created, err := accounts.CreateOrganization(ctx, st, accounts.NewOrganization{Name: "S", OwnerEmail: "a@s.example", OwnerName: "A"}, start)
	if err != nil {
		t.Fatal(err)
	}
	org := created.Organization.ID
	b := &kiln.Build{ID: kiln.NewID(), OrganizationID: org, ProjectID: kiln.NewID(), BuildSettingID: kiln.NewID(), Status: kiln.StatusPending,
		Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping, Branch: "main", UEVersion: "5.3", TriggeredBy: "cron", CreatedAt: start}
	if err := st.CreateBuild(ctx, b); err != nil {
		t.Fatal(err)
	}
	a := &kiln.Artifact{BuildID: b.ID, OrganizationID: org, ProjectID: b.ProjectID, BuildSettingID: b.BuildSettingID, Platform: b.Platform,
		BuildType: b.BuildType, UEVersion: "5.3", Branch: "main", Commit: "c", Key: org + "/" + b.ID + ".tar.gz", SizeBytes: 7, ChecksumMD5: "m", CreatedAt: start}
	if err := arts.Put(ctx, a.Key, func(w io.Writer) error { _, err := io.WriteString(w, "tarball"); return err }); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateArtifact(ctx, a); err != nil {
		t.Fatal(err)
	}
	keys, _ := keyring.New(make([]byte, keyring.MasterKeySize))
	srv := httptest.NewServer(nil)
	defer srv.Close()
	srv.Config.Handler = New(Config{Store: st, Keys: keys, Artifacts: arts, PublicURL: srv.URL, Now: now})

	req, _ := http.NewRequest("GET", srv.URL+"/builds/"+b.ID+"/download", nil)
	req.Header.Set("Authorization", "Bearer "+created.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var d downloadBody
	json.NewDecoder(resp.Body).Decode(&d)
	resp.Body.Close()
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
