package dynamostore

import (
	"context"
	"fmt"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/live"
)

// An organization's connected sockets are counted by "n" on its count item, which every
// transaction that puts or deletes one of its organization's socket items changes by 1 in the
// same transaction; Admit adds on the condition n < limit, so two connects at the same moment
// cannot both take the last place (one transaction of the two fails its condition).
//
// If a Lambda dies: every change here is one transaction after a consistent read, so it happened
// or it did not; nothing is left half done. A socket whose $disconnect never ran keeps its items
// (and its place) until its expiry: the table's time to live deletes them then, and Admit does not
// wait for it. When the count says the organization is full (or there is no count: it expired
// with the sockets it counted, or was never written), Admit recounts (recount): the unexpired
// organization's socket items, read consistently, deleting the expired ones, written as the new
// count if the count did not change meanwhile. So the count is never below the sockets there are,
// and a count left high by the time to live heals at the next Admit that finds it full.

// liveCountItem is an organization's count of connected sockets.
type liveCountItem struct {
	itemKeys
	N   *int64 `dynamo:"n"`
	TTL int64  `dynamo:"ttl"`
}

// liveTx is a transaction whose writes are named, to tell which conditions failed.
type liveTx struct {
	writes []func(*dynamo.WriteTx)
	names  []string
}

func (t *liveTx) update(name string, u *dynamo.Update) {
	t.writes, t.names = append(t.writes, func(tx *dynamo.WriteTx) { tx.Update(u) }), append(t.names, name)
}

func (t *liveTx) put(name string, p *dynamo.Put) {
	t.writes, t.names = append(t.writes, func(tx *dynamo.WriteTx) { tx.Put(p) }), append(t.names, name)
}

func (t *liveTx) delete(name string, d *dynamo.Delete) {
	t.writes, t.names = append(t.writes, func(tx *dynamo.WriteTx) { tx.Delete(d) }), append(t.names, name)
}

// run runs the transaction (again after conflicts, see runTx). failed names the writes whose
// condition failed, nil when it was written.
func (r *LiveRegistry) run(ctx context.Context, t *liveTx) (failed map[string]bool, err error) {
	err = r.s.runTx(ctx, func(tx *dynamo.WriteTx) {
		for _, w := range t.writes {
			w(tx)
		}
	})
	if at := txFailedAt(err); at != nil {
		failed = map[string]bool{}
		for _, i := range at {
			failed[t.names[i]] = true
		}
		return failed, nil
	}
	return nil, err
}

// countUpdate changes the organization's count by delta: an addition sets the count's ttl and
// needs the count to exist and, with a limit, be below it; a subtraction needs it above 0.
func (r *LiveRegistry) countUpdate(orgID string, delta, limit int, ttl int64) *dynamo.Update {
	u := r.s.table.Update(attrPK, liveOrgPK(orgID)).Range(attrSK, liveCountSK).Add("n", delta)
	switch {
	case delta < 0:
		return u.If("$ > ?", "n", 0)
	case limit > 0:
		return u.Set("ttl", ttl).If("$ < ?", "n", limit) // false when there is no count
	default:
		return u.Set("ttl", ttl).If("attribute_exists($)", "n")
	}
}

func (r *LiveRegistry) orgCopyKey(orgID, connID string) *dynamo.Delete {
	return r.s.table.Delete(attrPK, liveOrgPK(orgID)).Range(attrSK, liveSocketSK(connID)).If(exists, attrPK)
}

// writeConn makes the socket item hold c (created when create is set, else ErrNoConn for a socket
// it does not know) and the organization items follow in the same transaction: the socket item
// of c's organization put (and counted if it is new, under limit), the one of the organization
// it was connected to before deleted (and uncounted if it was there).
func (r *LiveRegistry) writeConn(ctx context.Context, c *live.Conn, limit int, create bool) error {
	it := newLiveConnItem(c)
	var skipOldCopy, skipOldCount bool
	lastVer := int64(-1)
	for range liveAttempts {
		old, err := r.readConn(ctx, c.ID)
		if err != nil {
			return err
		}
		if old == nil && !create {
			return live.ErrNoConn
		}
		oldOrg := ""
		if old != nil {
			oldOrg = old.OrganizationID
			if old.Ver != lastVer {
				skipOldCopy, skipOldCount, lastVer = false, false, old.Ver
			}
		}
		u, err := r.s.fieldsUpdate(it.PK, it.SK, it, liveConnFields)
		if err != nil {
			return wrap("write socket", err)
		}
		cond, args := ifVersion(old)
		var t liveTx
		t.update("socket", u.Add("ver", 1).If(cond, args...))
		if oldOrg != "" && oldOrg != c.OrgID && !skipOldCopy {
			t.delete("oldCopy", r.orgCopyKey(oldOrg, c.ID))
			if !skipOldCount {
				t.update("oldCount", r.countUpdate(oldOrg, -1, 0, 0))
			}
		}
		if c.OrgID != "" {
			t.put("copy", r.s.table.Put(it.orgCopy()))
			if c.OrgID != oldOrg {
				t.update("count", r.countUpdate(c.OrgID, 1, limit, it.TTL))
			}
		}
		failed, err := r.run(ctx, &t)
		if err != nil {
			return wrap("write socket", err)
		}
		if failed == nil {
			return nil
		}
		skipOldCopy = skipOldCopy || failed["oldCopy"]
		skipOldCount = skipOldCount || failed["oldCount"] || failed["oldCopy"]
		if failed["count"] && !failed["socket"] {
			n, err := r.recount(ctx, c.OrgID)
			if err != nil {
				return err
			}
			if limit > 0 && n >= limit {
				return live.ErrTooManyConns
			}
		}
	}
	return wrap("write socket", errLiveContention)
}

// DeleteConn deletes the socket item, its memberships and its organization's socket item
// (uncounting it) in one transaction, on the condition that the socket item is as read. A socket
// in more rooms than a transaction takes has its memberships deleted first, in batches: if the
// Lambda dies then, the socket stays with rooms whose memberships are gone, which is what a
// Leave leaves too, and the next DeleteConn (its $disconnect, or a send finding it gone) ends it.
func (r *LiveRegistry) DeleteConn(ctx context.Context, id string) error {
	var skipCopy, skipCount bool
	lastVer := int64(-1)
	for range liveAttempts {
		old, err := r.readConn(ctx, id)
		if err != nil || old == nil {
			return err
		}
		if old.Ver != lastVer {
			skipCopy, skipCount, lastVer = false, false, old.Ver
		}
		rooms := old.Rooms
		if len(rooms)+3 > maxTxItems {
			if err := r.deleteMembers(ctx, id, rooms); err != nil {
				return err
			}
			rooms = nil
		}
		cond, args := ifVersion(old)
		var t liveTx
		t.delete("socket", r.s.table.Delete(attrPK, old.PK).Range(attrSK, old.SK).If(cond, args...))
		for _, key := range rooms {
			pk, sk := liveMemberKey(key, id)
			t.delete("member", r.s.table.Delete(attrPK, pk).Range(attrSK, sk))
		}
		if org := old.OrganizationID; org != "" && !skipCopy {
			t.delete("copy", r.orgCopyKey(org, id))
			if !skipCount {
				t.update("count", r.countUpdate(org, -1, 0, 0))
			}
		}
		failed, err := r.run(ctx, &t)
		if err != nil {
			return wrap("delete socket", err)
		}
		if failed == nil {
			return nil
		}
		skipCopy = skipCopy || failed["copy"]
		skipCount = skipCount || failed["count"] || failed["copy"]
	}
	return wrap("delete socket", errLiveContention)
}

// deleteMembers deletes a socket's memberships of the rooms given, 25 a request.
func (r *LiveRegistry) deleteMembers(ctx context.Context, connID string, rooms []string) error {
	keys := make([]dynamo.Keyed, 0, len(rooms))
	for _, key := range rooms {
		pk, sk := liveMemberKey(key, connID)
		keys = append(keys, dynamo.Keys{pk, sk})
	}
	if _, err := r.s.table.Batch(attrPK, attrSK).Write().Delete(keys...).Run(ctx); err != nil {
		return wrap("delete memberships", err)
	}
	return nil
}

// recount counts the organization's unexpired socket items, deletes the expired ones, and
// writes the count, on the condition that the count did not change since it was read: then no
// socket item was put or deleted but the expired ones (each such change changes the count), so
// the number written is not below the sockets there are.
func (r *LiveRegistry) recount(ctx context.Context, orgID string) (int, error) {
	pk := liveOrgPK(orgID)
	for range liveAttempts {
		var cnt liveCountItem
		err := r.s.readItem(ctx, pk, liveCountSK, &cnt)
		if err != nil && !isNotFound(err) {
			return 0, wrap("recount sockets", err)
		}
		q := listQuery{pkAttr: attrPK, skAttr: attrSK, pk: pk, skPrefix: prefixLiveSocket, forward: true}
		items, _, err := queryPage(ctx, r.s, q, 0, func(*liveConnItem) string { return "" })
		if err != nil {
			return 0, wrap("recount sockets", err)
		}
		now := r.now().Unix()
		n, ttl := 0, now
		for _, it := range items {
			if it.TTL > now {
				n, ttl = n+1, max(ttl, it.TTL)
				continue
			}
			err := r.s.table.Delete(attrPK, pk).Range(attrSK, it.SK).If("$ <= ?", "ttl", now).Run(ctx)
			if err != nil && !isCondFailed(err) {
				return 0, wrap("delete an expired socket", err)
			}
		}
		u := r.s.table.Update(attrPK, pk).Range(attrSK, liveCountSK).Set("type", typeLiveCount).Set("n", n).Set("ttl", ttl)
		if cnt.N == nil {
			u = u.If("attribute_not_exists($)", "n")
		} else {
			u = u.If("$ = ?", "n", *cnt.N)
		}
		err = u.Run(ctx)
		if isCondFailed(err) {
			continue
		}
		if err != nil {
			return 0, wrap("recount sockets", err)
		}
		return n, nil
	}
	return 0, fmt.Errorf("dynamostore: recount sockets: %w", errLiveContention)
}
