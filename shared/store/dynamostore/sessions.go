package dynamostore

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// sessionItem is a console session in its user's partition: PK "USER#<userId>", SK
// "SESSION#<id>". ttl (seconds) is its expiry, for DynamoDB's time to live, which deletes it
// within days of expiring.
type sessionItem struct {
	itemKeys
	ID             string `dynamo:"id"`
	UserID         string `dynamo:"userId"`
	Hash           string `dynamo:"hash"`
	OrganizationID string `dynamo:"organizationId"`
	CreatedAt      int64  `dynamo:"createdAt"`
	ExpiresAt      int64  `dynamo:"expiresAt"`
	UserAgent      string `dynamo:"userAgent"`
	Address        string `dynamo:"address"`
	TTL            int64  `dynamo:"ttl"`
}

// sessionHashItem finds a session by the hash of its secret: PK = SK = "SESSIONHASH#<sha256>".
// It only points at the session item, which holds the session: a session whose item is gone
// (signed out, or expired and deleted) is not found even if its hash item is still there.
type sessionHashItem struct {
	itemKeys
	UserID    string `dynamo:"userId"`
	SessionID string `dynamo:"sessionId"`
	TTL       int64  `dynamo:"ttl"`
}

func (it *sessionItem) session() *kiln.Session {
	return &kiln.Session{
		ID: it.ID, UserID: it.UserID, Hash: it.Hash, OrganizationID: it.OrganizationID,
		CreatedAt: fromMS(it.CreatedAt), ExpiresAt: fromMS(it.ExpiresAt),
		UserAgent: it.UserAgent, Address: it.Address,
	}
}

// CreateSession writes the session item and its hash item in one transaction, each only if
// absent.
func (s *Store) CreateSession(ctx context.Context, ss *kiln.Session) error {
	ttl := ss.ExpiresAt.Unix()
	it := &sessionItem{
		itemKeys: itemKeys{PK: userPK(ss.UserID), SK: sessionSK(ss.ID), Type: typeSession},
		ID:       ss.ID, UserID: ss.UserID, Hash: ss.Hash, OrganizationID: ss.OrganizationID,
		CreatedAt: toMS(ss.CreatedAt), ExpiresAt: toMS(ss.ExpiresAt), UserAgent: ss.UserAgent, Address: ss.Address,
		TTL: ttl,
	}
	hashItem := &sessionHashItem{
		itemKeys: hashItemKeys(sessionHashKey(ss.Hash), typeSessionHash),
		UserID:   ss.UserID, SessionID: ss.ID, TTL: ttl,
	}
	err := s.runTx(ctx, func(tx *dynamo.WriteTx) {
		for _, p := range s.hashPairPuts(it, hashItem) {
			tx.Put(p)
		}
	})
	if txFailedAt(err) != nil {
		return kiln.Errorf(kiln.EConflict, "the session already exists")
	}
	return wrap("create session", err)
}

// GetSessionByHash reads the hash item, then the session item it points at (both consistent).
func (s *Store) GetSessionByHash(ctx context.Context, hash string) (*kiln.Session, error) {
	const op = "get session by hash"
	h, err := getItem[sessionHashItem](ctx, s, op, "session", sessionHashKey(hash), sessionHashKey(hash))
	if err != nil {
		return nil, err
	}
	it, err := getItem[sessionItem](ctx, s, op, "session", userPK(h.UserID), sessionSK(h.SessionID))
	if err != nil {
		return nil, err
	}
	if it.Hash != hash {
		return nil, kiln.NotFound("session")
	}
	return it.session(), nil
}

// ListSessions queries the user's partition for SK begins_with "SESSION#" and keeps the sessions
// unexpired at now, newest first. Expired ones stay until DynamoDB's time to live deletes them, so
// a user has few.
func (s *Store) ListSessions(ctx context.Context, userID string, now time.Time) ([]*kiln.Session, error) {
	q := listQuery{pkAttr: attrPK, skAttr: attrSK, pk: userPK(userID), skPrefix: prefixSession}
	all, err := listAll(ctx, s, "list sessions", q, 0, (*sessionItem).session)
	if err != nil {
		return nil, err
	}
	live := slices.DeleteFunc(all, func(ss *kiln.Session) bool { return ss.Expired(now) })
	slices.SortStableFunc(live, func(a, b *kiln.Session) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	return live, nil
}

// SetSessionOrganization updates the session item, only if it exists; the hash item does not hold
// the organization.
func (s *Store) SetSessionOrganization(ctx context.Context, userID, sessionID, orgID string) (*kiln.Session, error) {
	u := s.table.Update(attrPK, userPK(userID)).Range(attrSK, sessionSK(sessionID))
	if orgID == "" {
		u = u.Remove("organizationId")
	} else {
		u = u.Set("organizationId", orgID)
	}
	var it sessionItem
	err := u.If(exists, attrPK).Value(ctx, &it)
	if isCondFailed(err) {
		return nil, kiln.NotFound("session")
	}
	if err != nil {
		return nil, wrap("set session organization", err)
	}
	return it.session(), nil
}

// DeleteSession reads the session item for its hash, then deletes it (only if it still exists)
// and its hash item in one transaction.
func (s *Store) DeleteSession(ctx context.Context, userID, sessionID string) error {
	const op = "delete session"
	it, err := getItem[sessionItem](ctx, s, op, "session", userPK(userID), sessionSK(sessionID))
	if err != nil {
		return err
	}
	return s.deleteHashPair(ctx, op, "session", it.itemKeys, sessionHashKey(it.Hash))
}
