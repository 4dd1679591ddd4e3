package dynamostore

import (
	"context"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// auditItem is an event of an organization's audit log: PK "ORG#<org>", SK "AUDIT#<id>" (ids sort
// by time, so the partition reads newest first). ttl (seconds) is a year after the event, for
// DynamoDB's time to live, which deletes expired items within days.
type auditItem struct {
	itemKeys
	OrganizationID string            `dynamo:"organizationId"`
	ID             string            `dynamo:"id"`
	At             int64             `dynamo:"at"`
	Kind           string            `dynamo:"kind"`
	Category       string            `dynamo:"category"`
	ActorKind      string            `dynamo:"actorKind"`
	ActorID        string            `dynamo:"actorId"`
	ActorName      string            `dynamo:"actorName"`
	ActorEmail     string            `dynamo:"actorEmail"`
	Address        string            `dynamo:"address"`
	Target         string            `dynamo:"target"`
	Details        map[string]string `dynamo:"details,omitempty"`
	TTL            int64             `dynamo:"ttl"`
}

func auditSK(id string) string { return prefixAudit + id }

func (it *auditItem) event() *kiln.AuditEvent {
	return &kiln.AuditEvent{
		ID: it.ID, OrganizationID: it.OrganizationID, At: fromMS(it.At), Kind: it.Kind,
		ActorKind: it.ActorKind, ActorID: it.ActorID, ActorName: it.ActorName, ActorEmail: it.ActorEmail,
		Address: it.Address, Target: it.Target, Details: it.Details,
	}
}

// RecordAudit puts the event's item, only if absent.
func (s *Store) RecordAudit(ctx context.Context, e *kiln.AuditEvent) error {
	it := &auditItem{
		itemKeys:       itemKeys{PK: orgPK(e.OrganizationID), SK: auditSK(e.ID), Type: typeAudit},
		OrganizationID: e.OrganizationID, ID: e.ID, At: toMS(e.At), Kind: e.Kind, Category: e.Category(),
		ActorKind: e.ActorKind, ActorID: e.ActorID, ActorName: e.ActorName, ActorEmail: e.ActorEmail,
		Address: e.Address, Target: e.Target, Details: e.Details,
		TTL: e.At.Add(kiln.AuditRetention).Unix(),
	}
	err := s.table.Put(it).If(notExists, attrPK).Run(ctx)
	if isCondFailed(err) {
		return kiln.Errorf(kiln.EConflict, "the audit event already exists")
	}
	return wrap("record audit event", err)
}

// ListAudit queries the organization's partition for SK begins_with "AUDIT#", newest first, with
// the filter's equality terms.
func (s *Store) ListAudit(ctx context.Context, orgID string, f kiln.AuditFilter, p store.Page) ([]*kiln.AuditEvent, string, error) {
	q := orgPageQuery(orgID, prefixAudit, p.After, auditSK(p.After))
	if f.ActorID != "" {
		q.filters = append(q.filters, eqFilter{"actorId", f.ActorID})
	}
	switch {
	case f.ByCategory():
		q.filters = append(q.filters, eqFilter{"category", f.Kind})
	case f.Kind != "":
		q.filters = append(q.filters, eqFilter{"kind", f.Kind})
	}
	return list(ctx, s, "list audit events", q, limit(p), func(it *auditItem) string { return it.ID }, (*auditItem).event)
}
