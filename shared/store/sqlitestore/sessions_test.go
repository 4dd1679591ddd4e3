package sqlitestore_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// A new session drops the sessions that expired more than a day before it; one expired more
// recently is still answered (as expired).
func TestCreateSessionDropsLongExpiredSessions(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "kiln.db"))
	ctx := t.Context()
	at := time.Now().UTC().Truncate(time.Millisecond)
	session := func(created time.Time) *kiln.Session {
		id := kiln.NewID()
		return &kiln.Session{ID: id, UserID: "u1", Hash: "hash-" + id, CreatedAt: created, ExpiresAt: created.Add(kiln.SessionTTL)}
	}
	longGone := session(at.Add(-kiln.SessionTTL - 25*time.Hour))
	recent := session(at.Add(-kiln.SessionTTL - time.Hour))
	for _, ss := range []*kiln.Session{longGone, recent, session(at)} {
		if err := s.CreateSession(ctx, ss); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.GetSessionByHash(ctx, longGone.Hash); !kiln.IsCode(err, kiln.ENotFound) {
		t.Fatalf("session expired over a day ago: %v, want not_found", err)
	}
	if got, err := s.GetSessionByHash(ctx, recent.Hash); err != nil || !got.Expired(at) {
		t.Fatalf("session expired an hour ago: %+v, %v; want it, expired", got, err)
	}
}
