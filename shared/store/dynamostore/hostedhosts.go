package dynamostore

import (
	"context"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// hostedHostItem is the record of one of kiln's own build hosts, in its own partition:
// PK = SK = "HOSTEDHOST#<instance id>".
type hostedHostItem struct {
	itemKeys
	ID             string `dynamo:"id"`
	SeenAt         int64  `dynamo:"seenAt"`
	ClaimedAt      *int64 `dynamo:"claimedAt,omitempty"`
	OrganizationID string `dynamo:"organizationId,omitempty"`
	BuildID        string `dynamo:"buildId,omitempty"`
}

func (it *hostedHostItem) host() *kiln.HostedHost {
	return &kiln.HostedHost{ID: it.ID, SeenAt: fromMS(it.SeenAt), ClaimedAt: fromMSPtr(it.ClaimedAt),
		OrganizationID: it.OrganizationID, BuildID: it.BuildID}
}

func hostedHostKey(id string) string { return "HOSTEDHOST#" + id }

// GetHostedHost is one consistent GetItem.
func (s *Store) GetHostedHost(ctx context.Context, id string) (*kiln.HostedHost, error) {
	if id == "" {
		return nil, kiln.NotFound("hosted host")
	}
	return get(ctx, s, "get hosted host", "hosted host", hostedHostKey(id), hostedHostKey(id), (*hostedHostItem).host)
}

// SeeHostedHost puts the record only if absent, then reads what is stored.
func (s *Store) SeeHostedHost(ctx context.Context, id string, now time.Time) (*kiln.HostedHost, error) {
	if id == "" {
		return nil, kiln.Errorf(kiln.EBadRequest, "a hosted host needs its instance id")
	}
	key := hostedHostKey(id)
	it := &hostedHostItem{itemKeys: itemKeys{PK: key, SK: key, Type: typeHostedHost}, ID: id, SeenAt: toMS(now)}
	err := s.table.Put(it).If(notExists, attrPK).Run(ctx)
	if err == nil {
		return it.host(), nil
	}
	if !isCondFailed(err) {
		return nil, wrap("see hosted host", err)
	}
	return s.GetHostedHost(ctx, id)
}

// ClaimHostedHost sets the claim on the record, creating it if absent, on the condition that no
// claim is recorded.
func (s *Store) ClaimHostedHost(ctx context.Context, h *kiln.HostedHost) error {
	if h.ID == "" || h.ClaimedAt == nil {
		return kiln.Errorf(kiln.EBadRequest, "a hosted host's claim needs its instance id and time")
	}
	key := hostedHostKey(h.ID)
	u := s.table.Update(attrPK, key).Range(attrSK, key).
		Set("type", typeHostedHost).Set("id", h.ID).
		SetIfNotExists("seenAt", toMS(h.SeenAt)).
		Set("claimedAt", toMS(*h.ClaimedAt))
	if h.OrganizationID != "" {
		u = u.Set("organizationId", h.OrganizationID).Set("buildId", h.BuildID)
	}
	err := u.If("attribute_not_exists(claimedAt)").Run(ctx)
	if isCondFailed(err) {
		return kiln.Errorf(kiln.EConflict, "the host claimed a build already")
	}
	return wrap("claim hosted host", err)
}
