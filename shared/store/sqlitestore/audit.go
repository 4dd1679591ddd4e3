package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

const auditCols = `org_id, id, at, kind, actor_kind, actor_id, actor_name, actor_email, address, target, details`

func scanAudit(r scanner) (*kiln.AuditEvent, error) {
	var e kiln.AuditEvent
	var at int64
	var details string
	if err := r.Scan(&e.OrganizationID, &e.ID, &at, &e.Kind, &e.ActorKind, &e.ActorID, &e.ActorName, &e.ActorEmail,
		&e.Address, &e.Target, &details); err != nil {
		return nil, err
	}
	e.At = fromMS(at)
	if details != "" && details != "null" {
		if err := json.Unmarshal([]byte(details), &e.Details); err != nil {
			return nil, fmt.Errorf("audit event %s details: %w", e.ID, err)
		}
	}
	return &e, nil
}

// RecordAudit adds an event to the organization's audit log and, in the same transaction, drops
// its events older than kiln.AuditRetention.
func (s *Store) RecordAudit(ctx context.Context, e *kiln.AuditEvent) error {
	details, err := json.Marshal(e.Details)
	if err != nil {
		return fmt.Errorf("sqlitestore: record audit event: %w", err)
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO audit_events (`+auditCols+`, category) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			e.OrganizationID, e.ID, ms(e.At), e.Kind, e.ActorKind, e.ActorID, e.ActorName, e.ActorEmail, e.Address, e.Target,
			string(details), e.Category()); err != nil {
			return writeErr("record audit event", err, "the audit event already exists")
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM audit_events WHERE org_id = ? AND at < ?`,
			e.OrganizationID, ms(e.At.Add(-kiln.AuditRetention))); err != nil {
			return fmt.Errorf("sqlitestore: expire audit events: %w", err)
		}
		return nil
	})
}

// ListAudit pages through the organization's audit log, newest first.
func (s *Store) ListAudit(ctx context.Context, orgID string, f kiln.AuditFilter, p store.Page) ([]*kiln.AuditEvent, string, error) {
	q := inOrg(orgID)
	whereIf(&q, "actor_id = ?", f.ActorID)
	if f.ByCategory() {
		q.where("category = ?", f.Kind)
	} else {
		whereIf(&q, "kind = ?", f.Kind)
	}
	return list(ctx, s, "list audit events", auditCols, "audit_events", "id", q, p, scanAudit,
		func(e *kiln.AuditEvent) string { return e.ID })
}
