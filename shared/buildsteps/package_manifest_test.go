package buildsteps

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/artifacts/fsartifacts"
	"github.com/kilnbuild/kiln/shared/manifest"
)

// failingManifests is an artifact store whose Put of a manifest fails.
type failingManifests struct{ artifacts.Store }

func (f failingManifests) Put(ctx context.Context, key string, write func(io.Writer) error) error {
	if strings.HasSuffix(key, ".manifest.json.gz") {
		return errors.New("storage is down")
	}
	return f.Store.Put(ctx, key, write)
}

func TestPackageStoresManifest(t *testing.T) {
	t.Parallel()
	staged := t.TempDir()
	for name, size := range map[string]int{"Game/Content/Paks/p.pak": 3000, "Game.sh": 12, "a.txt": 0} {
		p := filepath.Join(staged, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := []manifest.Entry{{Path: "Game.sh", Size: 12}, {Path: "Game/Content/Paks/p.pak", Size: 3000}, {Path: "a.txt", Size: 0}}
	in := PackageInput{StagedDir: staged, TopName: "Game", Key: "k/b.tar.gz", ManifestKey: "k/b.manifest.json.gz"}

	t.Run("stored beside the artifact", func(t *testing.T) {
		store, err := fsartifacts.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := (&Steps{Artifacts: store}).Package(t.Context(), in, &recorder{}); err != nil {
			t.Fatal(err)
		}
		f, err := store.Open(t.Context(), in.ManifestKey)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		got, err := manifest.Read(f)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("manifest %v, %v; want %v", got, err, want)
		}
	})
	t.Run("a manifest that cannot be stored does not fail the build", func(t *testing.T) {
		store, err := fsartifacts.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		rec := &recorder{}
		if _, err := (&Steps{Artifacts: failingManifests{store}}).Package(t.Context(), in, rec); err != nil {
			t.Fatalf("Package: %v", err)
		}
		if warns := rec.at(LevelWarn); len(warns) != 1 || !strings.Contains(warns[0], "no size report") {
			t.Errorf("warnings %q", warns)
		}
		f, err := store.Open(t.Context(), in.Key)
		if err != nil {
			t.Fatalf("artifact: %v", err)
		}
		f.Close()
	})
}
