package dynamostore

import (
	"context"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// agentItem is a build agent, stored twice with the same attributes, as trigger tokens are: in
// the organization's partition (PK "ORG#<org>", SK "AGENT#<id>") and in its own partition for the
// lookup by its token's hash (PK = SK = "AGENTHASH#<sha256>"). Both are updated together.
type agentItem struct {
	itemKeys
	credentialItem
	Pool       string `dynamo:"pool"`
	RevokedAt  *int64 `dynamo:"revokedAt,omitempty"`
	LastSeenAt *int64 `dynamo:"lastSeenAt,omitempty"`
}

func newAgentItem(a *kiln.Agent, keys itemKeys) *agentItem {
	return &agentItem{
		itemKeys: keys, credentialItem: newCredentialItem(&a.Credential),
		Pool: a.Pool, RevokedAt: toMSPtr(a.RevokedAt), LastSeenAt: toMSPtr(a.LastSeenAt),
	}
}

func (it *agentItem) agent() *kiln.Agent {
	return &kiln.Agent{
		Credential: it.credential(), Pool: it.Pool, RevokedAt: fromMSPtr(it.RevokedAt), LastSeenAt: fromMSPtr(it.LastSeenAt),
	}
}

// CreateAgent writes, in one transaction: a check that the organization exists, then the agent
// and its hash item, each only if absent.
func (s *Store) CreateAgent(ctx context.Context, a *kiln.Agent) error {
	return s.createHashPair(ctx, "create agent", "the agent already exists", a.OrganizationID,
		newAgentItem(a, itemKeys{PK: orgPK(a.OrganizationID), SK: agentSK(a.ID), Type: typeAgent}),
		newAgentItem(a, hashItemKeys(agentHashKey(a.Hash), typeAgentHash)))
}

// GetAgentByHash is one consistent GetItem on "AGENTHASH#<hash>".
func (s *Store) GetAgentByHash(ctx context.Context, hash string) (*kiln.Agent, error) {
	return get(ctx, s, "get agent by hash", "agent", agentHashKey(hash), agentHashKey(hash), (*agentItem).agent)
}

// GetAgent is one consistent GetItem on "ORG#<org>" / "AGENT#<id>".
func (s *Store) GetAgent(ctx context.Context, orgID, id string) (*kiln.Agent, error) {
	return get(ctx, s, "get agent", "agent", orgPK(orgID), agentSK(id), (*agentItem).agent)
}

func (s *Store) getAgent(ctx context.Context, op, orgID, id string) (*agentItem, error) {
	return getItem[agentItem](ctx, s, op, "agent", orgPK(orgID), agentSK(id))
}

// ListAgents queries the organization's partition for SK begins_with "AGENT#", newest first.
func (s *Store) ListAgents(ctx context.Context, orgID string, p store.Page) ([]*kiln.Agent, string, error) {
	q := orgPageQuery(orgID, prefixAgent, p.After, agentSK(p.After))
	return list(ctx, s, "list agents", q, limit(p), func(it *agentItem) string { return it.ID }, (*agentItem).agent)
}

// RevokeAgent reads the agent (for its hash), then sets revokedAt on both items in one
// transaction, each only if it exists and is not revoked yet; an agent already revoked is read
// back as it is.
func (s *Store) RevokeAgent(ctx context.Context, orgID, id string, at time.Time) (*kiln.Agent, error) {
	it, err := s.getAgent(ctx, "revoke agent", orgID, id)
	if err != nil {
		return nil, err
	}
	if it.RevokedAt != nil {
		return it.agent(), nil
	}
	err = s.updateHashPair(ctx, it.itemKeys, agentHashKey(it.Hash), "revokedAt", toMS(at),
		"attribute_exists($) AND attribute_not_exists($)", attrPK, "revokedAt")
	if txFailedAt(err) != nil {
		return s.GetAgent(ctx, orgID, id) // revoked meanwhile (keeps that time)
	}
	if err != nil {
		return nil, wrap("revoke agent", err)
	}
	a := it.agent()
	t := fromMS(toMS(at))
	a.RevokedAt = &t
	return a, nil
}

// TouchAgent reads the agent (for its hash), then sets lastSeenAt on both items in one
// transaction, each only if it still exists.
func (s *Store) TouchAgent(ctx context.Context, orgID, id string, at time.Time) error {
	it, err := s.getAgent(ctx, "touch agent", orgID, id)
	if err != nil {
		return err
	}
	return s.touchHashPair(ctx, "touch agent", "agent", it.itemKeys, agentHashKey(it.Hash), "lastSeenAt", at)
}
