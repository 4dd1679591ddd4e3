package storetest

import (
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

func testAuditLog(t *testing.T, open func(t *testing.T) store.Store) {
	s, ctx := open(t), t.Context()
	f := createOrganization(t, s)
	other := createOrganization(t, s)
	at := now()
	event := func(orgID, kind, actor string, details map[string]string) *kiln.AuditEvent {
		at = at.Add(time.Second)
		e := &kiln.AuditEvent{ID: kiln.NewID(), OrganizationID: orgID, At: at, Kind: kind, ActorKind: kiln.AuditActorMember,
			ActorID: actor, ActorName: "Name " + actor, ActorEmail: actor + "@example.com", Address: "192.0.2.7", Target: "t-" + kind, Details: details}
		wantOK(t, s.RecordAudit(ctx, e), "RecordAudit "+kind)
		return e
	}
	ada, bob := kiln.NewID(), kiln.NewID()
	e1 := event(f.org.ID, "member.role_changed", ada, map[string]string{"from": "viewer", "to": "member"})
	e2 := event(f.org.ID, "webhook.created", bob, map[string]string{"url": "https://hooks.example/x"})
	e3 := event(f.org.ID, "member.removed", bob, nil)
	e4 := event(f.org.ID, "token.created", ada, map[string]string{"name": "ci"})
	event(other.org.ID, "member.removed", ada, nil)

	ids := func(es []*kiln.AuditEvent) []string {
		out := make([]string, len(es))
		for i, e := range es {
			out[i] = e.ID
		}
		return out
	}
	all, next, err := s.ListAudit(ctx, f.org.ID, kiln.AuditFilter{}, store.Page{})
	wantOK(t, err, "ListAudit")
	wantEqual(t, "the whole log, newest first", ids(all), []string{e4.ID, e3.ID, e2.ID, e1.ID})
	wantEqual(t, "next of the whole log", next, "")
	wantEqual(t, "an event as recorded", all[3], e1)
	if all[1].Details != nil && len(all[1].Details) != 0 {
		t.Fatalf("an event without details reads back with %v", all[1].Details)
	}

	page, next, err := s.ListAudit(ctx, f.org.ID, kiln.AuditFilter{}, store.Page{Limit: 3})
	wantOK(t, err, "ListAudit page 1")
	wantEqual(t, "page 1", ids(page), []string{e4.ID, e3.ID, e2.ID})
	page, next, err = s.ListAudit(ctx, f.org.ID, kiln.AuditFilter{}, store.Page{Limit: 3, After: next})
	wantOK(t, err, "ListAudit page 2")
	wantEqual(t, "page 2", ids(page), []string{e1.ID})
	wantEqual(t, "next after the last page", next, "")

	for _, tc := range []struct {
		name   string
		filter kiln.AuditFilter
		want   []string
	}{
		{"by actor", kiln.AuditFilter{ActorID: ada}, []string{e4.ID, e1.ID}},
		{"by kind", kiln.AuditFilter{Kind: "member.removed"}, []string{e3.ID}},
		{"by category", kiln.AuditFilter{Kind: "member"}, []string{e3.ID, e1.ID}},
		{"by actor and category", kiln.AuditFilter{ActorID: bob, Kind: "member"}, []string{e3.ID}},
		{"nothing matches", kiln.AuditFilter{Kind: "plan"}, []string{}},
	} {
		got, _, err := s.ListAudit(ctx, f.org.ID, tc.filter, store.Page{})
		wantOK(t, err, "ListAudit "+tc.name)
		wantEqual(t, tc.name, ids(got), tc.want)
	}
	// Filtered pages: one match per page.
	first, next, err := s.ListAudit(ctx, f.org.ID, kiln.AuditFilter{ActorID: bob}, store.Page{Limit: 1})
	wantOK(t, err, "ListAudit filtered page 1")
	wantEqual(t, "filtered page 1", ids(first), []string{e3.ID})
	second, _, err := s.ListAudit(ctx, f.org.ID, kiln.AuditFilter{ActorID: bob}, store.Page{Limit: 1, After: next})
	wantOK(t, err, "ListAudit filtered page 2")
	wantEqual(t, "filtered page 2", ids(second), []string{e2.ID})

	wantCode(t, s.RecordAudit(ctx, e1), kiln.EConflict, "recording an event twice")
}
