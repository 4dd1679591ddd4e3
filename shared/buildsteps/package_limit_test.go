package buildsteps

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/artifacts/fsartifacts"
)

// countingStore counts the bytes written into its artifacts.
type countingStore struct {
	artifacts.Store
	written int64
}

func (c *countingStore) Put(ctx context.Context, key string, write func(io.Writer) error) error {
	return c.Store.Put(ctx, key, func(w io.Writer) error {
		return write(writerFunc(func(p []byte) (int, error) {
			n, err := w.Write(p)
			c.written += int64(n)
			return n, err
		}))
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestPackageLargerThanTheLimitFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fs, err := fsartifacts.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	store := &countingStore{Store: fs}
	a := &Steps{Artifacts: store}
	ctx := context.Background()
	// Random bytes do not compress: the package is a little over 8 MiB.
	staged := t.TempDir()
	data := make([]byte, 8<<20)
	rand.Read(data)
	if err := os.WriteFile(filepath.Join(staged, "Game.pak"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	full, err := a.Package(ctx, PackageInput{StagedDir: staged, TopName: "Game", Key: "k/full.tar.gz"}, &recorder{})
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name    string
		max     int64
		reason  string
		written int64 // at most
	}{
		{"ExactlyTheLimit", full.Size, "", full.Size},
		{"OneByteOver", full.Size - 1, "the artifact is larger than the limit of " + itoa64(full.Size-1) + " bytes (KILN_ARTIFACT_MAX)", full.Size - 1},
		{"FarOver", 1 << 20, "the artifact is larger than the limit of 1 MiB (KILN_ARTIFACT_MAX)", 1 << 20},
	}
	for _, c := range cases {
		store.written = 0
		rec := &recorder{}
		key := "k/" + c.name + ".tar.gz"
		out, err := a.Package(ctx, PackageInput{StagedDir: staged, TopName: "Game", Key: key, MaxSize: c.max}, rec)
		if store.written > c.written {
			t.Errorf("%s: %d bytes written, want at most %d: packaging did not stop at the limit", c.name, store.written, c.written)
		}
		if c.reason == "" {
			if err != nil || out.Size != full.Size {
				t.Errorf("%s: %v, size %d", c.name, err, out.Size)
			}
			continue
		}
		var fl *Failure
		if !errors.As(err, &fl) || fl.Stage != StageUpload || fl.Reason != c.reason {
			t.Errorf("%s: err %v, want the failure %q", c.name, err, c.reason)
		}
		if _, err := store.Open(ctx, key); err == nil {
			t.Errorf("%s: the artifact was stored", c.name)
		}
	}
	// Nothing partial is left in the store's directory: only the two complete artifacts.
	entries, err := os.ReadDir(filepath.Join(dir, "k"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("files left in the store: %v", names)
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
