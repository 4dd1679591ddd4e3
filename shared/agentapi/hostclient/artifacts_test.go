package hostclient_test

import (
	"crypto/md5"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/kilnbuild/kiln/shared/agentapi/hostclient"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestArtifactUploadInParts: an artifact of several parts arrives whole, in order; a writer that
// fails leaves no object and no open upload behind.
func TestArtifactUploadInParts(t *testing.T) {
	s := newService(t)
	ctx := t.Context()
	b, cred := s.claimed(t, s.project, s.setting)
	store := hostclient.NewArtifactStore(&hostclient.Client{BaseURL: s.api.URL, Credential: cred}, 3)
	key := s.orgID + "/" + b.ID + ".tar.gz"

	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 12<<20+12345) // three parts of 5 MiB, the last one short
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	err := store.Put(ctx, key, func(w io.Writer) error {
		for rest := data; len(rest) > 0; { // odd-sized writes, as a gzip stream makes them
			n := min(len(rest), 70_001)
			if _, err := w.Write(rest[:n]); err != nil {
				return err
			}
			rest = rest[n:]
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := s.artifacts.Open(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	h := md5.New()
	n, _ := io.Copy(h, obj)
	obj.Close()
	if want := md5.Sum(data); n != int64(len(data)) || string(h.Sum(nil)) != string(want[:]) {
		t.Fatalf("stored %d bytes with another MD5; want %d bytes as written", n, len(data))
	}

	// Another key than the build's is refused before anything is sent.
	if err := store.Put(ctx, s.orgID+"/other.tar.gz", func(w io.Writer) error { return nil }); err == nil {
		t.Error("Put under another key than the build's succeeded")
	}
	// A writer that fails half way: the upload is aborted and the earlier object stays.
	broken := errors.New("tar failed")
	err = store.Put(ctx, key, func(w io.Writer) error {
		if _, err := w.Write(data[:6<<20]); err != nil {
			return err
		}
		return broken
	})
	if !errors.Is(err, broken) {
		t.Fatalf("Put = %v, want the writer's error", err)
	}
	if size, err := s.artifacts.Stat(ctx, key); err != nil || size != int64(len(data)) {
		t.Errorf("after a failed Put the object is %d bytes (%v), want the earlier one", size, err)
	}
	if _, err := s.artifacts.Stat(ctx, s.orgID+"/other.tar.gz"); !kiln.IsCode(err, kiln.ENotFound) {
		t.Errorf("another key holds an object: %v", err)
	}
}
