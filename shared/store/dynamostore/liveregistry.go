package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/live"
)

// LiveRegistry keeps the sockets and rooms of live build events in the table, for the API
// Gateway WebSocket API's Lambdas: every frame is an invocation of its own, any of which may run
// at the same moment as another on the same socket, organization or room. Its items:
//
//   - the socket: PK "LIVESOCKETS#<nn>" (nn: one of liveShards, by a hash of the socket's id),
//     SK "SOCKET#<connId>": the live.Conn, the set "rooms" of the rooms it is in ("<org>#<build>")
//     and "ver", its version, which every change of the item adds 1 to. Changes that read the item
//     first (Admit, DeleteConn, Join) write on the condition that ver is still the one read, so
//     the rooms they delete or count are the rooms there are. AllConns queries the liveShards
//     partitions: no Scan, and no partition takes every socket's writes.
//   - the organization's socket: PK "ORG#<org>#LIVE", SK "SOCKET#<connId>": a copy of a connected
//     socket, for OrganizationConns and to recount the organization's sockets.
//   - the organization's count: PK "ORG#<org>#LIVE", SK "COUNT": "n", how many organization's
//     socket items there are, kept in the transactions that put and delete them (liveadmit.go).
//   - the membership: PK "ORG#<org>#ROOM#<build>", SK "SOCKET#<connId>": the cursor ("seq",
//     "status") and the lease ("lease_token", "lease_until" in ms, "dirty") (liverooms.go).
//
// Every item has "ttl", the socket's expiry in Unix seconds (the count's: the latest admitted
// socket's), for the table's time to live: a socket whose $disconnect never ran goes by itself.
type LiveRegistry struct {
	s *Store
}

var _ live.Registry = (*LiveRegistry)(nil)

// NewLiveRegistry returns the registry on the table of the given name (the layout CreateTable
// makes).
func NewLiveRegistry(db *dynamo.DB, table string) *LiveRegistry {
	return &LiveRegistry{s: New(db, table)}
}

// liveShards is how many partitions hold the socket items. It is part of every socket's key:
// changing it loses the sockets open at the time (for a day at most).
const liveShards = 8

// liveAttempts bounds how often a change that read an item first starts again because the item
// changed in between.
const liveAttempts = 10

// errLiveContention is what a change gets when the item changed liveAttempts times under it.
var errLiveContention = errors.New("the item kept changing")

// liveConnItem is a socket item and, without rooms and ver, an organization's socket item.
type liveConnItem struct {
	itemKeys
	ID             string   `dynamo:"id"`
	OpenedAt       int64    `dynamo:"openedAt"`
	ExpiresAt      int64    `dynamo:"expiresAt"`
	OrganizationID string   `dynamo:"organizationId,omitempty"`
	UserID         string   `dynamo:"userId,omitempty"`
	Role           string   `dynamo:"role,omitempty"`
	CredentialHash string   `dynamo:"credentialHash,omitempty"`
	Session        bool     `dynamo:"session,omitempty"`
	SocketID       string   `dynamo:"socketId,omitempty"`
	TTL            int64    `dynamo:"ttl"`
	Rooms          []string `dynamo:"rooms,set,omitempty"`
	Ver            int64    `dynamo:"ver,omitempty"`
}

// liveConnFields are the attributes of a live.Conn, as PutConn and Admit write them.
var liveConnFields = []string{"type", "id", "openedAt", "expiresAt", "organizationId", "userId", "role",
	"credentialHash", "session", "socketId", "ttl"}

func liveSocketKeys(connID string) (pk, sk string) {
	h := fnv.New32a()
	_, _ = h.Write([]byte(connID))
	return liveSocketsPK(h.Sum32() % liveShards), liveSocketSK(connID)
}

func newLiveConnItem(c *live.Conn) *liveConnItem {
	pk, sk := liveSocketKeys(c.ID)
	return &liveConnItem{
		itemKeys: itemKeys{PK: pk, SK: sk, Type: typeLiveSocket},
		ID:       c.ID, OpenedAt: toMS(c.OpenedAt), ExpiresAt: toMS(c.Expires),
		OrganizationID: c.OrgID, UserID: c.UserID, Role: string(c.Role), CredentialHash: c.CredentialHash,
		Session: c.Session, SocketID: c.SocketID, TTL: c.Expires.Unix(),
	}
}

// orgCopy is the organization's socket item of a connected socket.
func (it *liveConnItem) orgCopy() *liveConnItem {
	cp := *it
	cp.itemKeys = itemKeys{PK: liveOrgPK(it.OrganizationID), SK: liveSocketSK(it.ID), Type: typeLiveOrgSocket}
	cp.Rooms, cp.Ver = nil, 0
	return &cp
}

func (it *liveConnItem) conn() *live.Conn {
	return &live.Conn{
		ID: it.ID, OpenedAt: fromMS(it.OpenedAt), Expires: fromMS(it.ExpiresAt),
		OrgID: it.OrganizationID, UserID: it.UserID, Role: kiln.Role(it.Role), CredentialHash: it.CredentialHash,
		Session: it.Session, SocketID: it.SocketID,
	}
}

// readConn reads the socket item, nil when there is none.
func (r *LiveRegistry) readConn(ctx context.Context, connID string) (*liveConnItem, error) {
	pk, sk := liveSocketKeys(connID)
	var it liveConnItem
	err := r.s.readItem(ctx, pk, sk, &it)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, wrap("read socket", err)
	}
	return &it, nil
}

// ifVersion is the condition that the socket item is still as read (absent when it was).
func ifVersion(old *liveConnItem) (string, []any) {
	if old == nil {
		return notExists, []any{attrPK}
	}
	return "$ = ?", []any{"ver", old.Ver}
}

// PutConn writes the socket's fields onto its item, keeping its rooms (see writeConn).
func (r *LiveRegistry) PutConn(ctx context.Context, c *live.Conn) error {
	if err := r.writeConn(ctx, c, 0, true); err != nil {
		return fmt.Errorf("put socket %s: %w", c.ID, err)
	}
	return nil
}

// GetConn reads the socket item (consistent).
func (r *LiveRegistry) GetConn(ctx context.Context, id string) (*live.Conn, error) {
	it, err := r.readConn(ctx, id)
	if err != nil {
		return nil, err
	}
	if it == nil {
		return nil, live.ErrNoConn
	}
	return it.conn(), nil
}

// Admit: see writeConn.
func (r *LiveRegistry) Admit(ctx context.Context, c *live.Conn, limit int) error {
	if c.OrgID == "" {
		return fmt.Errorf("dynamostore: admit socket %s: no organization", c.ID)
	}
	err := r.writeConn(ctx, c, limit, false)
	if err != nil && !errors.Is(err, live.ErrNoConn) && !errors.Is(err, live.ErrTooManyConns) {
		return fmt.Errorf("admit socket %s: %w", c.ID, err)
	}
	return err
}

// OrganizationConns queries the organization's socket items (consistent).
func (r *LiveRegistry) OrganizationConns(ctx context.Context, orgID string) ([]*live.Conn, error) {
	return r.listConns(ctx, "list the organization's sockets", liveOrgPK(orgID))
}

// AllConns queries the liveShards partitions of socket items (consistent).
func (r *LiveRegistry) AllConns(ctx context.Context) ([]*live.Conn, error) {
	var out []*live.Conn
	for shard := range uint32(liveShards) {
		conns, err := r.listConns(ctx, "list sockets", liveSocketsPK(shard))
		if err != nil {
			return nil, err
		}
		out = append(out, conns...)
	}
	return out, nil
}

func (r *LiveRegistry) listConns(ctx context.Context, op, pk string) ([]*live.Conn, error) {
	q := listQuery{pkAttr: attrPK, skAttr: attrSK, pk: pk, skPrefix: prefixLiveSocket, forward: true}
	return listAll(ctx, r.s, op, q, 0, (*liveConnItem).conn)
}

// now is the registry's clock for leases and expiries.
func (r *LiveRegistry) now() time.Time { return time.Now() }
