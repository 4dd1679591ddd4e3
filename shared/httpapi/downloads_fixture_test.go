package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/artifacts/fsartifacts"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
	"github.com/kilnbuild/kiln/shared/storefixture"
)

// downloadFixture is an organization with one build and the record of its artifact (7 bytes
// under key <org>/<build>.tar.gz, not yet stored), a file artifact store, and a clock the test
// moves by setting offset.
type downloadFixture struct {
	ctx      context.Context
	st       *sqlitestore.Store
	files    *fsartifacts.Store
	offset   *atomic.Int64
	now      func() time.Time
	created  *accounts.Created
	org      string
	build    *kiln.Build
	artifact *kiln.Artifact
}

func newDownloadFixture(t *testing.T) *downloadFixture {
	t.Helper()
	ctx := context.Background()
	st := storefixture.SQLite(t)
	files, err := fsartifacts.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	offset := &atomic.Int64{}
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
	return &downloadFixture{ctx: ctx, st: st, files: files, offset: offset,
		now: func() time.Time { return start.Add(time.Duration(offset.Load())) }, created: created, org: org, build: b, artifact: a}
}

// serve starts the API over the fixture's store and clock with arts as its artifact store, on a
// test server closed when the test ends.
func (f *downloadFixture) serve(t *testing.T, arts artifacts.Store) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(nil)
	t.Cleanup(srv.Close)
	srv.Config.Handler = f.handler(arts, srv.URL)
	return srv
}

// handler is the API over the fixture's store and clock with arts as its artifact store, at
// publicURL; every handler signs with the same keys.
func (f *downloadFixture) handler(arts artifacts.Store, publicURL string) http.Handler {
	keys, _ := keyring.New(make([]byte, keyring.MasterKeySize))
	return New(Config{Store: f.st, Keys: keys, Artifacts: arts, PublicURL: publicURL, Now: f.now})
}
