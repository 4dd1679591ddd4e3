package hostclient_test

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/kilnbuild/kiln/shared/agentapi/hostclient"
	"github.com/kilnbuild/kiln/shared/artifacts/fsartifacts"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestArtifactStreamedWithoutPresignedParts: a service without presigned parts (kiln serve's file
// store) takes the artifact in one streamed PUT; it arrives whole, the service completes the
// build with it, a failing writer leaves the earlier object and reports its own error, and an
// artifact over the service's limit is refused.
func TestArtifactStreamedWithoutPresignedParts(t *testing.T) {
	s := newService(t)
	files, err := fsartifacts.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.server.Uploads, s.server.Artifacts = nil, files
	ctx := t.Context()
	b, cred := s.claimed(t, s.project, s.setting)
	client := &hostclient.Client{BaseURL: s.api.URL, Credential: cred}
	store := hostclient.NewArtifactStore(client, 0)
	key := s.orgID + "/" + b.ID + ".tar.gz"

	rng := rand.New(rand.NewPCG(3, 4))
	data := make([]byte, 9<<20+777)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	write := func(w io.Writer) error {
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 65_537)
			if _, err := w.Write(rest[:n]); err != nil {
				return err
			}
			rest = rest[n:]
		}
		return nil
	}
	if err := store.Put(ctx, key, write); err != nil {
		t.Fatal(err)
	}
	obj, err := files.Open(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	h := md5.New()
	n, _ := io.Copy(h, obj)
	obj.Close()
	sum := md5.Sum(data)
	if n != int64(len(data)) || string(h.Sum(nil)) != string(sum[:]) {
		t.Fatalf("stored %d bytes with another MD5; want %d bytes as written", n, len(data))
	}

	broken := errors.New("tar failed")
	err = store.Put(ctx, key, func(w io.Writer) error {
		if _, err := w.Write(data[:3<<20]); err != nil {
			return err
		}
		return broken
	})
	if !errors.Is(err, broken) {
		t.Fatalf("Put = %v, want the writer's error", err)
	}
	if obj, err := files.Open(ctx, key); err != nil || obj.Size() != int64(len(data)) {
		t.Fatalf("after a failed Put: %v", err)
	} else {
		obj.Close()
	}

	s.server.ArtifactMax = 1 << 20
	if err := store.Put(ctx, key, write); kiln.ErrorCode(err) != kiln.EPayloadTooLarge {
		t.Fatalf("Put over the limit = %v, want payload_too_large", err)
	}
	s.server.ArtifactMax = 0

	st, err := client.Complete(ctx, int64(len(data)), hex.EncodeToString(sum[:]))
	if err != nil || st.Status != string(kiln.StatusComplete) {
		t.Fatalf("complete: %+v %v", st, err)
	}
}
