package buildsteps

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/artifacts/fsartifacts"
)

func TestPackageFailures(t *testing.T) {
	t.Parallel()
	store, err := fsartifacts.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := &Steps{Artifacts: store}
	ctx := context.Background()

	rec := &recorder{}
	_, err = a.Package(ctx, PackageInput{StagedDir: filepath.Join(t.TempDir(), "missing"), TopName: "Game", Key: "k/b.tar.gz"}, rec)
	var fl *Failure
	if !errors.As(err, &fl) || fl.Stage != StageUpload || fl.Reason != "packaging failed: could not archive the staged build" {
		t.Errorf("missing staged dir: %v", err)
	}
	if _, err := store.Open(ctx, "k/b.tar.gz"); err == nil {
		t.Error("a failed package left an artifact")
	}
	if !slices.Equal(rec.stages, []Stage{StageUpload}) {
		t.Errorf("stages %v", rec.stages)
	}

	staged := t.TempDir()
	os.WriteFile(filepath.Join(staged, "a"), []byte("a"), 0o644)
	for name, in := range map[string]PackageInput{
		"invalid key": {StagedDir: staged, TopName: "Game", Key: "../x"},
		"no top name": {StagedDir: staged, Key: "k/b.tar.gz"},
	} {
		if _, err := a.Package(ctx, in, &recorder{}); err == nil || errors.As(err, &fl) {
			t.Errorf("%s: err %v, want a plain error", name, err)
		}
	}
	if _, err := (&Steps{}).Package(ctx, PackageInput{StagedDir: staged, TopName: "Game", Key: "k/b.tar.gz"}, &recorder{}); err == nil {
		t.Error("no store: no error")
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := a.Package(cancelled, PackageInput{StagedDir: staged, TopName: "Game", Key: "k/c.tar.gz"}, &recorder{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}

func TestEnvironments(t *testing.T) {
	t.Parallel()
	environ := []string{"PATH=/bin", "HOME=/root", "KILN_GITHUB_CLIENT_SECRET=s", "AWS_SECRET_ACCESS_KEY=s", "P4PASSWD=s",
		"GITHUB_TOKEN=s", "GIT_CONFIG_COUNT=1", "GIT_DIR=/elsewhere", "GIT_TRACE_CURL=1", "GIT_ASKPASS=/x", "SSH_ASKPASS=/x",
		"GIT_SSL_CAINFO=/ca.pem", "LC_ALL=de_DE.UTF-8", "FAKE_UAT_SLEEP=1"}
	if got, want := strings.Join(gitEnv(environ), " "),
		"PATH=/bin HOME=/root KILN_GITHUB_CLIENT_SECRET=s AWS_SECRET_ACCESS_KEY=s P4PASSWD=s GITHUB_TOKEN=s GIT_SSL_CAINFO=/ca.pem FAKE_UAT_SLEEP=1"; got != want {
		t.Errorf("gitEnv:\n got %s\nwant %s", got, want)
	}
}
