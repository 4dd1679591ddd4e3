package dynamostore_test

import (
	"testing"
	"time"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// A session's two items carry ttl (its expiry in Unix seconds) for DynamoDB's time to live, and a
// hash item whose session item is gone (deleted by the time to live first) finds nothing.
func TestSessionItemsExpireAndNeedTheirSessionItem(t *testing.T) {
	s, table := newStoreTable(t)
	ctx := t.Context()
	at := time.Now().UTC().Truncate(time.Millisecond)
	ss := &kiln.Session{ID: kiln.NewID(), UserID: kiln.NewID(), Hash: "0123abcd" + kiln.NewID(),
		CreatedAt: at, ExpiresAt: at.Add(kiln.SessionTTL)}
	if err := s.CreateSession(ctx, ss); err != nil {
		t.Fatal(err)
	}
	for _, key := range [][2]string{{"USER#" + ss.UserID, "SESSION#" + ss.ID}, {"SESSIONHASH#" + ss.Hash, "SESSIONHASH#" + ss.Hash}} {
		var item struct {
			TTL int64 `dynamo:"ttl"`
		}
		if err := table.Get("PK", key[0]).Range("SK", dynamo.Equal, key[1]).Consistent(true).One(ctx, &item); err != nil {
			t.Fatalf("read %v: %v", key, err)
		}
		if item.TTL != ss.ExpiresAt.Unix() {
			t.Fatalf("%v: ttl %d, want %d", key, item.TTL, ss.ExpiresAt.Unix())
		}
	}
	if _, err := s.GetSessionByHash(ctx, ss.Hash); err != nil {
		t.Fatalf("get before the session item goes: %v", err)
	}
	if err := table.Delete("PK", "USER#"+ss.UserID).Range("SK", "SESSION#"+ss.ID).Run(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetSessionByHash(ctx, ss.Hash); !kiln.IsCode(err, kiln.ENotFound) {
		t.Fatalf("get with only the hash item left: %v, want not_found", err)
	}
}

// A member item is in GSI1 under its user, so ListMemberships finds it.
func TestMemberItemIsInGSI1UnderItsUser(t *testing.T) {
	s, table := newStoreTable(t)
	ctx := t.Context()
	orgID := newOrg(t, s)
	at := time.Now().UTC()
	m := &kiln.Member{OrganizationID: orgID, User: kiln.User{ID: kiln.NewID(), Email: "a@example.com", Name: "A", CreatedAt: at},
		Role: kiln.RoleOwner, CreatedAt: at}
	if err := s.CreateMember(ctx, m, nil); err != nil {
		t.Fatal(err)
	}
	var item struct {
		GSI1PK string `dynamo:"GSI1PK"`
		GSI1SK string `dynamo:"GSI1SK"`
	}
	if err := table.Get("PK", "ORG#"+orgID).Range("SK", dynamo.Equal, "MEMBER#"+m.User.ID).Consistent(true).One(ctx, &item); err != nil {
		t.Fatal(err)
	}
	if item.GSI1PK != "USER#"+m.User.ID || item.GSI1SK != "MEMBER#"+orgID {
		t.Fatalf("member item's GSI1 keys %q / %q", item.GSI1PK, item.GSI1SK)
	}
}
