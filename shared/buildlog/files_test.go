package buildlog_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"

	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/buildlog/logstoretest"
)

func TestFilesContract(t *testing.T) {
	logstoretest.Run(t, func(t *testing.T) (logstoretest.Store, func() logstoretest.Store) {
		dir := t.TempDir()
		open := func() logstoretest.Store {
			f, err := buildlog.NewFiles(dir)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
		return open(), open
	})
}

func TestFilesRetention(t *testing.T) {
	logstoretest.Retention(t, func(t *testing.T, retention time.Duration, now func() time.Time) logstoretest.Store {
		f, err := buildlog.NewFiles(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		f.SetRetention(retention, now)
		return f
	})
}

// DeleteExpired removes the files of logs past their retention, and only those.
func TestFilesDeleteExpired(t *testing.T) {
	dir := t.TempDir()
	f, err := buildlog.NewFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	f.SetRetention(24*time.Hour, func() time.Time { return now })
	var ids kiln.IDGenerator
	org, old, young := kiln.NewID(), ids.New(now.Add(-25*time.Hour)), ids.New(now)
	for _, b := range []string{old, young} {
		if err := f.Append(t.Context(), org, b, 1, kiln.LogLine{Time: now, Level: kiln.LevelInfo, Message: "hi"}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := f.DeleteExpired(t.Context())
	if err != nil || n != 1 {
		t.Fatalf("DeleteExpired = %d, %v; want 1", n, err)
	}
	for b, want := range map[string]bool{old: false, young: true} {
		_, err := os.Stat(filepath.Join(dir, org, b+".jsonl"))
		if exists := err == nil; exists != want {
			t.Errorf("log of %s exists: %v, want %v", b, exists, want)
		}
	}
}
