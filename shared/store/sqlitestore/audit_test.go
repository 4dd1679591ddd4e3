package sqlitestore_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// TestAuditLogKeepsAYear: recording an event drops the organization's events older than a year,
// and only theirs.
func TestAuditLogKeepsAYear(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "kiln.db"))
	now := time.Now().UTC().Truncate(time.Millisecond)
	record := func(orgID string, at time.Time) *kiln.AuditEvent {
		e := &kiln.AuditEvent{ID: kiln.NewID(), OrganizationID: orgID, At: at, Kind: "token.created", ActorKind: kiln.AuditActorMember}
		if err := s.RecordAudit(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	old := record("org-a", now.Add(-kiln.AuditRetention-time.Hour))
	otherOld := record("org-b", now.Add(-kiln.AuditRetention-time.Hour))
	young := record("org-a", now.Add(-kiln.AuditRetention+time.Hour))
	fresh := record("org-a", now)

	got, _, err := s.ListAudit(t.Context(), "org-a", kiln.AuditFilter{}, store.Page{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != fresh.ID || got[1].ID != young.ID {
		t.Fatalf("after a new event, org-a's log holds %d events; want the two younger than a year (not %s)", len(got), old.ID)
	}
	other, _, err := s.ListAudit(t.Context(), "org-b", kiln.AuditFilter{}, store.Page{})
	if err != nil {
		t.Fatal(err)
	}
	if len(other) != 1 || other[0].ID != otherOld.ID {
		t.Fatalf("org-b's log was changed by org-a's event: %d events", len(other))
	}
}
