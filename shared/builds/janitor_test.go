package builds

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts/fsartifacts"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/manifest"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
	"github.com/kilnbuild/kiln/shared/storefixture"
)

func TestJanitorDeletesOnlyExpiredArtifacts(t *testing.T) {
	ctx := context.Background()
	st, arts := janitorStores(t)
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	org := kiln.NewID()
	put := func(age time.Duration) *kiln.Artifact {
		a := &kiln.Artifact{BuildID: kiln.NewID(), OrganizationID: org, ProjectID: kiln.NewID(), BuildSettingID: kiln.NewID(),
			Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping, UEVersion: "5.3", Branch: "main", Commit: "abc",
			SizeBytes: 5, ChecksumMD5: "x", CreatedAt: now.Add(-age)}
		a.Key = org + "/" + a.BuildID + ".tar.gz"
		if err := arts.Put(ctx, a.Key, func(w io.Writer) error { _, err := io.Copy(w, strings.NewReader("bytes")); return err }); err != nil {
			t.Fatal(err)
		}
		if err := arts.Put(ctx, manifest.Key(a.Key), func(w io.Writer) error { return manifest.Write(w, nil) }); err != nil {
			t.Fatal(err)
		}
		if err := st.CreateArtifact(ctx, a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	old1, old2 := put(31*24*time.Hour), put(40*24*time.Hour)
	fresh := put(29 * 24 * time.Hour)
	j := &Janitor{Store: st, Artifacts: arts, Retention: 30 * 24 * time.Hour, Now: func() time.Time { return now }}
	n, err := j.Sweep(ctx)
	if err != nil || n != 2 {
		t.Fatalf("swept %d, %v", n, err)
	}
	for _, a := range []*kiln.Artifact{old1, old2} {
		if _, err := st.GetArtifact(ctx, org, a.BuildID); !kiln.IsCode(err, kiln.ENotFound) {
			t.Errorf("expired record kept: %v", err)
		}
		if _, err := arts.Open(ctx, a.Key); !kiln.IsCode(err, kiln.ENotFound) {
			t.Errorf("expired file kept: %v", err)
		}
		if _, err := arts.Open(ctx, manifest.Key(a.Key)); !kiln.IsCode(err, kiln.ENotFound) {
			t.Errorf("expired manifest kept: %v", err)
		}
	}
	if _, err := st.GetArtifact(ctx, org, fresh.BuildID); err != nil {
		t.Errorf("fresh artifact deleted: %v", err)
	}
	if f, err := arts.Open(ctx, manifest.Key(fresh.Key)); err != nil {
		t.Errorf("fresh manifest deleted: %v", err)
	} else {
		f.Close()
	}
	if n, _ := j.Sweep(ctx); n != 0 {
		t.Errorf("second sweep deleted %d", n)
	}
}

// expiringLogs counts the janitor's calls to delete expired logs.
type expiringLogs struct{ calls int }

func (l *expiringLogs) DeleteExpired(context.Context) (int, error) { l.calls++; return 3, nil }

// Every sweep also deletes the logs past retention, with no artifact to delete too.
func TestJanitorDeletesExpiredLogs(t *testing.T) {
	ctx := context.Background()
	st, arts := janitorStores(t)
	logs := &expiringLogs{}
	j := &Janitor{Store: st, Artifacts: arts, Logs: logs, Retention: 30 * 24 * time.Hour}
	if _, err := j.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if logs.calls != 1 {
		t.Fatalf("the sweep deleted expired logs %d times, want 1", logs.calls)
	}
}

// janitorStores opens the records' store and the artifacts' a janitor sweeps, both empty.
func janitorStores(t *testing.T) (*sqlitestore.Store, *fsartifacts.Store) {
	t.Helper()
	arts, err := fsartifacts.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return storefixture.SQLite(t), arts
}
