package dynamostore

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/live"
)

// liveMemberItem is a socket's membership of a build's room: its cursor and the lease on sending
// to it. A free lease has no lease_token.
type liveMemberItem struct {
	itemKeys
	ConnID     string `dynamo:"connId"`
	Seq        int64  `dynamo:"seq"`
	Status     string `dynamo:"status,omitempty"`
	LeaseToken string `dynamo:"lease_token,omitempty"`
	LeaseUntil int64  `dynamo:"lease_until,omitempty"` // ms
	Dirty      bool   `dynamo:"dirty"`
	TTL        int64  `dynamo:"ttl"`
}

// liveRoomKey names a room in a socket item's set of rooms.
func liveRoomKey(r live.Room) string { return r.OrgID + "#" + r.BuildID }

// liveMemberKey is the key of a socket's membership of the room named by a liveRoomKey.
func liveMemberKey(roomKey, connID string) (pk, sk string) {
	orgID, buildID, _ := strings.Cut(roomKey, "#")
	return liveRoomPK(orgID, buildID), liveSocketSK(connID)
}

// validRoom reports whether a room's ids are ids (a socket names the build it leaves): any other
// room has no members.
func validRoom(r live.Room) bool { return kiln.ValidID(r.OrgID) && kiln.ValidID(r.BuildID) }

func (r *LiveRegistry) member(connID string, rm live.Room) *dynamo.Update {
	return r.s.table.Update(attrPK, liveRoomPK(rm.OrgID, rm.BuildID)).Range(attrSK, liveSocketSK(connID))
}

// Join adds the room to the socket item's rooms and puts the membership, fresh (a membership
// that was there is replaced: its lease is void), in one transaction on the condition that the
// socket item is as read, so that the rooms counted against maxRooms are the socket's rooms.
func (r *LiveRegistry) Join(ctx context.Context, connID string, rm live.Room, c live.Cursor, maxRooms int) error {
	if !validRoom(rm) {
		return kiln.NotFound("build")
	}
	key := liveRoomKey(rm)
	for range liveAttempts {
		old, err := r.readConn(ctx, connID)
		if err != nil {
			return err
		}
		if old == nil {
			return live.ErrNoConn
		}
		if maxRooms > 0 && len(old.Rooms) >= maxRooms && !slices.Contains(old.Rooms, key) {
			return live.ErrTooManyRooms
		}
		pk, sk := liveMemberKey(key, connID)
		m := &liveMemberItem{itemKeys: itemKeys{PK: pk, SK: sk, Type: typeLiveMember},
			ConnID: connID, Seq: c.Seq, Status: string(c.Status), TTL: old.TTL}
		var t liveTx
		t.update("socket", r.s.table.Update(attrPK, old.PK).Range(attrSK, old.SK).
			AddStringsToSet("rooms", key).Add("ver", 1).If("$ = ?", "ver", old.Ver))
		t.put("member", r.s.table.Put(m))
		failed, err := r.run(ctx, &t)
		if err != nil {
			return wrap("join", err)
		}
		if failed == nil {
			return nil
		}
	}
	return wrap("join", errLiveContention)
}

// Leave takes the room out of the socket item's rooms and deletes the membership in one
// transaction; a membership without its room in a socket item (its socket is gone) is deleted
// alone.
func (r *LiveRegistry) Leave(ctx context.Context, connID string, rm live.Room) error {
	if !validRoom(rm) {
		return nil
	}
	key := liveRoomKey(rm)
	pk, sk := liveMemberKey(key, connID)
	spk, ssk := liveSocketKeys(connID)
	var t liveTx
	t.update("socket", r.s.table.Update(attrPK, spk).Range(attrSK, ssk).
		DeleteStringsFromSet("rooms", key).Add("ver", 1).If("contains($, ?)", "rooms", key))
	t.delete("member", r.s.table.Delete(attrPK, pk).Range(attrSK, sk))
	failed, err := r.run(ctx, &t)
	if err == nil && failed != nil {
		err = r.s.table.Delete(attrPK, pk).Range(attrSK, sk).Run(ctx)
	}
	return wrap("leave", err)
}

// Members queries the room's partition (consistent).
func (r *LiveRegistry) Members(ctx context.Context, rm live.Room) ([]string, error) {
	if !validRoom(rm) {
		return nil, nil
	}
	q := listQuery{pkAttr: attrPK, skAttr: attrSK, pk: liveRoomPK(rm.OrgID, rm.BuildID), skPrefix: prefixLiveSocket, forward: true}
	items, _, err := queryPage(ctx, r.s, q, 0, func(*liveMemberItem) string { return "" })
	if err != nil {
		return nil, wrap("list the room's sockets", err)
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ConnID
	}
	return out, nil
}

// Acquire sets a new lease token on the membership on the condition that it has none or one past
// its time; the membership as it was tells a held lease from no membership.
func (r *LiveRegistry) Acquire(ctx context.Context, connID string, rm live.Room, until time.Time) (live.Lease, bool, error) {
	if !validRoom(rm) {
		return live.Lease{}, false, live.ErrNotMember
	}
	token := kiln.NewID()
	var it liveMemberItem
	wrote, err := r.member(connID, rm).Set("lease_token", token).Set("lease_until", toMS(until)).Set("dirty", false).
		If("attribute_exists($) AND (attribute_not_exists($) OR $ <= ?)", attrPK, "lease_token", "lease_until", toMS(r.now())).
		CurrentValue(ctx, &it)
	switch {
	case isCondFailed(err): // it returns no item: there is none
		return live.Lease{}, false, live.ErrNotMember
	case err != nil:
		return live.Lease{}, false, wrap("acquire a lease", err)
	case !wrote && it.PK == "":
		return live.Lease{}, false, live.ErrNotMember
	case !wrote:
		return live.Lease{}, false, nil
	}
	return live.Lease{Token: token, Cursor: live.Cursor{Seq: it.Seq, Status: kiln.BuildStatus(it.Status)}}, true, nil
}

// MarkDirty sets dirty on the membership if there is one.
func (r *LiveRegistry) MarkDirty(ctx context.Context, connID string, rm live.Room) error {
	if !validRoom(rm) {
		return nil
	}
	err := r.member(connID, rm).Set("dirty", true).If(exists, attrPK).Run(ctx)
	if isCondFailed(err) {
		return nil
	}
	return wrap("mark a lease dirty", err)
}

// Release stores the cursor and frees the lease on the condition that the membership has the
// lease's token and is not dirty; failing that, it stores the cursor and clears dirty on the
// condition that it has the token (then it was dirty: released is false); failing both, the lease
// is not the membership's.
func (r *LiveRegistry) Release(ctx context.Context, connID string, rm live.Room, l live.Lease) (bool, error) {
	if !validRoom(rm) || l.Token == "" {
		return true, nil
	}
	cursor := func(u *dynamo.Update) *dynamo.Update {
		u = u.Set("seq", l.Seq).Set("dirty", false)
		if l.Status == "" {
			return u.Remove("status")
		}
		return u.Set("status", string(l.Status))
	}
	err := cursor(r.member(connID, rm)).Remove("lease_token", "lease_until").
		If("$ = ? AND $ = ?", "lease_token", l.Token, "dirty", false).Run(ctx)
	if !isCondFailed(err) {
		return true, wrap("release a lease", err)
	}
	again := cursor(r.member(connID, rm))
	if !l.Until.IsZero() {
		again = again.Set("lease_until", toMS(l.Until))
	}
	err = again.If("$ = ?", "lease_token", l.Token).Run(ctx)
	if isCondFailed(err) {
		return true, nil
	}
	if err != nil {
		return false, wrap("release a lease", err)
	}
	return false, nil
}
