package builds

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts/fsartifacts"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
	"github.com/kilnbuild/kiln/shared/storefixture"
)

// deliveryWorld is a SQLite store and an artifact store with organizations whose builds deliver to
// receivers the tests start, and a clock the tests move.
type deliveryWorld struct {
	st   *sqlitestore.Store
	arts *fsartifacts.Store
	mu   sync.Mutex
	now  time.Time
}

func newDeliveryWorld(t testing.TB) *deliveryWorld {
	t.Helper()
	st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "kiln.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	arts, err := fsartifacts.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &deliveryWorld{st: st, arts: arts, now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
}

func (w *deliveryWorld) clock() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now
}

func (w *deliveryWorld) advance(d time.Duration) {
	w.mu.Lock()
	w.now = w.now.Add(d)
	w.mu.Unlock()
}

// deliverer is a AutoDeployer on the world's stores and clock, with a plain client (the receivers
// listen on 127.0.0.1, which the outbound-safe client refuses).
func (w *deliveryWorld) deliverer() *AutoDeployer {
	return &AutoDeployer{Store: w.st, Artifacts: w.arts, Client: &http.Client{}, Attempts: 5, Backoff: 10 * time.Second,
		Logger: slog.New(slog.DiscardHandler), Now: w.clock,
		Lifecycle: &Lifecycle{Builds: w.st, Projects: w.st, Artifacts: w.st, Logger: slog.New(slog.DiscardHandler), Now: w.clock}}
}

// org makes an organization with a project and an auto deploy setting delivering to url.
func (w *deliveryWorld) org(t testing.TB, url string) *kiln.BuildSetting {
	t.Helper()
	at := w.clock()
	org, _ := storefixture.Org(t, w.st, kiln.PlanFree, at)
	p := storefixture.Project(t, w.st, org.ID, at)
	return storefixture.Setting(t, w.st, p, at, func(s *kiln.BuildSetting) { s.AutoDeploy, s.UploadBuildURL = true, url })
}

// build stores a complete build of set with an artifact, its delivery pending.
func (w *deliveryWorld) build(t testing.TB, set *kiln.BuildSetting) *kiln.Build {
	t.Helper()
	ctx := context.Background()
	at := w.clock()
	b := &kiln.Build{ID: kiln.NewID(), OrganizationID: set.OrganizationID, ProjectID: set.ProjectID, BuildSettingID: set.ID,
		Status: kiln.StatusComplete, Platform: set.Platform, BuildType: set.BuildType, Branch: "main", Commit: "abc",
		UEVersion: "5.3", TriggeredBy: "cron", AutoDeployStatus: kiln.AutoDeployPending, CreatedAt: at,
		StartedAt: &at, FinishedAt: &at}
	a := &kiln.Artifact{BuildID: b.ID, OrganizationID: b.OrganizationID, ProjectID: b.ProjectID, BuildSettingID: set.ID,
		Platform: b.Platform, BuildType: b.BuildType, UEVersion: "5.3", Branch: "main", Commit: "abc",
		SizeBytes: 7, ChecksumMD5: "x", CreatedAt: at, Key: b.OrganizationID + "/" + b.ID + ".tar.gz"}
	if err := w.arts.Put(ctx, a.Key, func(wr io.Writer) error { _, err := io.WriteString(wr, "tarball"); return err }); err != nil {
		t.Fatal(err)
	}
	if err := w.st.CreateArtifact(ctx, a); err != nil {
		t.Fatal(err)
	}
	// Last: a running deliverer may take the build at once.
	if err := w.st.CreateBuild(ctx, b); err != nil {
		t.Fatal(err)
	}
	return b
}

func (w *deliveryWorld) get(t testing.TB, b *kiln.Build) *kiln.Build {
	t.Helper()
	got, err := w.st.GetBuild(context.Background(), b.OrganizationID, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
