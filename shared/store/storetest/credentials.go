package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// credentialKinds are the kinds of credential (kiln.Credential) the credential contract runs for:
// API tokens, Perforce trigger tokens and agents.
var credentialKinds = []credentialSuite{tokenKind, triggerTokenKind, agentKind}

// credentialSuite is a credentialKind of any record type.
type credentialSuite interface {
	kindName() string
	// run runs the credential contract for the kind; others are all kinds, this one included.
	run(t *testing.T, open func(t *testing.T) store.Store, others []credentialSuite)
	// storeOne stores a fresh credential of the kind in the fixture's organization and gives its
	// hash.
	storeOne(t *testing.T, s store.Store, f fixture) string
}

// credentialKind says how the contract makes, stores, finds, lists, touches and revokes one kind
// of credential. Every call is of the fixture's organization (and, for tokens, of its owner).
type credentialKind[T any] struct {
	name string
	// fresh makes a credential of the fixture's organization, not stored yet.
	fresh func(f fixture) T
	cred  func(c T) *kiln.Credential
	// initial are the credentials a new fixture already holds.
	initial func(f fixture) []T
	// variants set the optional fields a stored credential may have, each checked to round-trip.
	variants map[string]func(c T)
	create   func(ctx context.Context, s store.Store, c T) error
	byHash   func(ctx context.Context, s store.Store, hash string) (T, error)
	list     func(ctx context.Context, s store.Store, f fixture, p store.Page) ([]T, string, error)
	revoke   func(ctx context.Context, s store.Store, f fixture, id string, at time.Time) error
	// revoked, for a kind whose revoked credentials are kept, sets on c what revoking it at time
	// at records; nil means revoking deletes the credential.
	revoked func(c T, at time.Time)
	// touch records a use at time at and touched sets on c what it records; nil for a kind
	// without one.
	touch   func(ctx context.Context, s store.Store, f fixture, id string, at time.Time) error
	touched func(c T, at time.Time)
}

// newCredential is a fresh credential of the organization whose secret starts with prefix.
func newCredential(orgID, prefix string) kiln.Credential {
	id := kiln.NewID()
	sum := sha256.Sum256([]byte(prefix + id))
	return kiln.Credential{ID: id, OrganizationID: orgID, Name: prefix + id,
		Hash: hex.EncodeToString(sum[:]), Hint: prefix + id[:4], CreatedAt: now()}
}

func (k credentialKind[T]) kindName() string { return k.name }

func (k credentialKind[T]) storeOne(t *testing.T, s store.Store, f fixture) string {
	return k.stored(t, s, f).Hash
}

// stored stores a fresh credential of the fixture's organization.
func (k credentialKind[T]) stored(t *testing.T, s store.Store, f fixture) *kiln.Credential {
	t.Helper()
	c := k.fresh(f)
	wantOK(t, k.create(t.Context(), s, c), "create "+k.name)
	return k.cred(c)
}

func (k credentialKind[T]) id(c T) string { return k.cred(c).ID }

// initialIDs are the ids of the credentials a new fixture already holds.
func (k credentialKind[T]) initialIDs(f fixture) []string {
	var ids []string
	if k.initial != nil {
		for _, c := range k.initial(f) {
			ids = append(ids, k.id(c))
		}
	}
	return ids
}

// wantStored fails the test unless c is stored as it is: found by its hash and listed.
func (k credentialKind[T]) wantStored(t *testing.T, s store.Store, f fixture, c T) {
	t.Helper()
	got, err := k.byHash(t.Context(), s, k.cred(c).Hash)
	wantOK(t, err, "get "+k.name+" by hash")
	wantEqual(t, k.name+" by hash", got, c)
	items, _, err := k.list(t.Context(), s, f, store.Page{Limit: store.MaxLimit})
	wantOK(t, err, "list "+k.name)
	for _, it := range items {
		if k.id(it) == k.id(c) {
			wantEqual(t, "listed "+k.name, it, c)
			return
		}
	}
	t.Fatalf("%s %s is not listed", k.name, k.id(c))
}

func (k credentialKind[T]) run(t *testing.T, open func(t *testing.T) store.Store, others []credentialSuite) {
	t.Run("CreateAndGetByHash", func(t *testing.T) {
		for name, set := range k.variants {
			t.Run(name, func(t *testing.T) {
				s := open(t)
				f := createOrganization(t, s)
				c := k.fresh(f)
				set(c)
				wantOK(t, k.create(t.Context(), s, c), "create "+k.name)
				k.wantStored(t, s, f, c)
			})
		}
	})

	t.Run("UnknownHashIsNotFound", func(t *testing.T) {
		s := open(t)
		f := createOrganization(t, s)
		hashes := map[string]string{"Unknown": k.cred(k.fresh(f)).Hash}
		for _, other := range others {
			if other.kindName() != k.name { // another kind's secret is none of this kind
				hashes[other.kindName()] = other.storeOne(t, s, f)
			}
		}
		for name, hash := range hashes {
			t.Run(name, func(t *testing.T) {
				_, err := k.byHash(t.Context(), s, hash)
				wantCode(t, err, kiln.ENotFound, "get "+k.name+" by hash")
			})
		}
	})

	t.Run("UnknownOrganizationIsNotFound", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		c := k.fresh(f)
		k.cred(c).OrganizationID = kiln.NewID() // no such organization
		wantCode(t, k.create(ctx, s, c), kiln.ENotFound, "create "+k.name+" in an organization that does not exist")
		_, err := k.byHash(ctx, s, k.cred(c).Hash)
		wantCode(t, err, kiln.ENotFound, "get the refused "+k.name+" by hash")
	})

	t.Run("TakenHashOrIDIsConflict", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		other := createOrganization(t, s)
		first := k.fresh(f)
		wantOK(t, k.create(ctx, s, first), "create "+k.name)
		cases := []struct {
			name string
			in   fixture
			take func(c *kiln.Credential)
		}{
			{"SameHash", f, func(c *kiln.Credential) { c.Hash = k.cred(first).Hash }},
			{"SameHashInAnotherOrganization", other, func(c *kiln.Credential) { c.Hash = k.cred(first).Hash }},
			{"SameID", f, func(c *kiln.Credential) { c.ID = k.id(first) }},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				c := k.fresh(tc.in)
				tc.take(k.cred(c))
				wantCode(t, k.create(ctx, s, c), kiln.EConflict, "create "+k.name)
				k.wantStored(t, s, f, first)
				if hash := k.cred(c).Hash; hash != k.cred(first).Hash {
					_, err := k.byHash(ctx, s, hash)
					wantCode(t, err, kiln.ENotFound, "get the refused "+k.name+" by hash")
				}
			})
		}
	})

	t.Run("ListNewestFirstInPages", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		other := createOrganization(t, s)
		ids := k.initialIDs(f)
		for range 4 {
			ids = append(ids, k.stored(t, s, f).ID)
			k.stored(t, s, other) // another organization's, never listed
		}
		for _, limit := range []int{1, 2, 3, 5, store.MaxLimit} {
			got := walk(t, limit, func(p store.Page) ([]T, string, error) { return k.list(ctx, s, f, p) }, k.id, nil)
			wantIDs(t, "list "+k.name, got, newestFirst(ids))
		}
	})

	t.Run("OtherOrganizationsCannotReach", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		other := createOrganization(t, s)
		c := k.fresh(f)
		wantOK(t, k.create(ctx, s, c), "create "+k.name)
		got := walk(t, store.MaxLimit, func(p store.Page) ([]T, string, error) { return k.list(ctx, s, other, p) }, k.id, nil)
		wantIDs(t, "list "+k.name+" of another organization", got, k.initialIDs(other))
		calls := map[string]func(in fixture, id string) error{
			"Revoke": func(in fixture, id string) error { return k.revoke(ctx, s, in, id, now()) },
		}
		if k.touch != nil {
			calls["Touch"] = func(in fixture, id string) error { return k.touch(ctx, s, in, id, now()) }
		}
		for name, call := range calls {
			t.Run(name, func(t *testing.T) {
				wantCode(t, call(other, k.id(c)), kiln.ENotFound, name+" from another organization")
				wantCode(t, call(f, kiln.NewID()), kiln.ENotFound, name+" of an unknown "+k.name)
				k.wantStored(t, s, f, c)
			})
		}
	})

	if k.touch != nil {
		t.Run("TouchRecordsTheUse", func(t *testing.T) {
			s := open(t)
			f := createOrganization(t, s)
			c := k.fresh(f)
			wantOK(t, k.create(t.Context(), s, c), "create "+k.name)
			for _, at := range []time.Time{now().Add(-time.Minute), now()} {
				wantOK(t, k.touch(t.Context(), s, f, k.id(c), at), "touch "+k.name)
				k.touched(c, at)
				k.wantStored(t, s, f, c)
			}
		})
	}

	t.Run("Revoke", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		c, kept := k.fresh(f), k.stored(t, s, f)
		wantOK(t, k.create(ctx, s, c), "create "+k.name)
		first := now().Add(-time.Minute)
		wantOK(t, k.revoke(ctx, s, f, k.id(c), first), "revoke "+k.name)
		_, err := k.byHash(ctx, s, kept.Hash)
		wantOK(t, err, "get the other "+k.name+" by hash")
		if k.revoked != nil { // kept, with the time of its first revocation
			k.revoked(c, first)
			k.wantStored(t, s, f, c)
			wantOK(t, k.revoke(ctx, s, f, k.id(c), now()), "revoke "+k.name+" again")
			k.wantStored(t, s, f, c)
			return
		}
		_, err = k.byHash(ctx, s, k.cred(c).Hash)
		wantCode(t, err, kiln.ENotFound, "get a revoked "+k.name+" by hash")
		got := walk(t, 10, func(p store.Page) ([]T, string, error) { return k.list(ctx, s, f, p) }, k.id, nil)
		wantIDs(t, "list "+k.name+" after revoking", got, newestFirst(append(k.initialIDs(f), kept.ID)))
		wantCode(t, k.revoke(ctx, s, f, k.id(c), now()), kiln.ENotFound, "revoke "+k.name+" again")
		if k.touch != nil {
			wantCode(t, k.touch(ctx, s, f, k.id(c), now()), kiln.ENotFound, "touch a revoked "+k.name)
		}
		again := k.fresh(f) // the hash is free again
		k.cred(again).Hash = k.cred(c).Hash
		wantOK(t, k.create(ctx, s, again), "create "+k.name+" with a revoked one's hash")
	})
}

// testCredentials runs the credential contract for each kind of credential.
func testCredentials(t *testing.T, open func(t *testing.T) store.Store) {
	for _, k := range credentialKinds {
		t.Run(k.kindName(), func(t *testing.T) { k.run(t, open, credentialKinds) })
	}
}
