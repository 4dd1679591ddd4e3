package dynamostore

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// The delivery queues are two GSI4 partitions, "DEPLOY" (builds awaiting auto deploy) and
// "WEBHOOKS#pending" (pending webhook deliveries), each sorted by dueSK: the next-attempt time, then
// the id. A due read queries its partition up to now in chunks and keeps at most perOrg entries of
// each organization, reading at most store.DueScanBudget entries.

// toDueMS stores a next-attempt time: 0 (attribute left out) for the zero time (due now).
func toDueMS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromDueMS reads a next-attempt time: the zero time for 0.
func fromDueMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return fromMS(v)
}

// dueSK is a queue entry's GSI4 sort key: its due time (agePrefix) and id.
func dueSK(dueMS int64, id string) string { return agePrefix(dueMS) + "#" + id }

// dueChunk is how many entries a due read asks for at a time.
const dueChunk = 100

// readDue reads GSI4 partition pk in due order up to now, keeping at most perOrg items of each
// organization (org tells an item's), until it has n, the partition ends or the scan budget is
// spent.
func readDue[I any](ctx context.Context, s *Store, pk string, now time.Time, perOrg, n int, keys func(*I) *itemKeys, org func(*I) string) ([]*I, error) {
	perOrg, n = limit(store.Page{Limit: perOrg}), limit(store.Page{Limit: n})
	q := listQuery{index: indexGSI4, pkAttr: attrGSI4PK, skAttr: attrGSI4SK, pk: pk, forward: true,
		skBefore: agePrefix(now.UnixMilli() + 1)}
	var out []*I
	taken := map[string]int{}
	for read := 0; read < store.DueScanBudget; {
		items, more, err := queryPage(ctx, s, q, min(dueChunk, store.DueScanBudget-read), func(*I) string { return "more" })
		if err != nil {
			return nil, err
		}
		read += len(items)
		for _, it := range items {
			if o := org(it); taken[o] < perOrg {
				taken[o]++
				out = append(out, it)
				if len(out) == n {
					return out, nil
				}
			}
		}
		if more == "" || len(items) == 0 {
			break
		}
		k := keys(items[len(items)-1])
		q.start = startKey("more", attrPK, k.PK, attrSK, k.SK, attrGSI4PK, k.GSI4PK, attrGSI4SK, k.GSI4SK)
	}
	return out, nil
}

// DueBuildDeliveries reads GSI4's partition "DEPLOY" up to now, fairly.
func (s *Store) DueBuildDeliveries(ctx context.Context, now time.Time, perOrg, n int) ([]*kiln.Build, error) {
	items, err := readDue(ctx, s, deployPK, now, perOrg, n,
		func(it *buildItem) *itemKeys { return &it.itemKeys }, func(it *buildItem) string { return it.OrganizationID })
	if err != nil {
		return nil, wrap("due build deliveries", err)
	}
	return values(items, (*buildItem).build), nil
}

// DueWebhookDeliveries reads GSI4's partition "WEBHOOKS#pending" up to now, fairly.
func (s *Store) DueWebhookDeliveries(ctx context.Context, now time.Time, perOrg, n int) ([]*kiln.WebhookDelivery, error) {
	items, err := readDue(ctx, s, pendingDeliveriesPK, now, perOrg, n,
		func(it *deliveryItem) *itemKeys { return &it.itemKeys }, func(it *deliveryItem) string { return it.OrganizationID })
	if err != nil {
		return nil, wrap("due webhook deliveries", err)
	}
	return values(items, (*deliveryItem).delivery), nil
}

// nextAtIs is the condition that an item's next-attempt attribute holds ms (absent for 0).
func nextAtIs(u *dynamo.Update, attr string, ms int64) *dynamo.Update {
	if ms == 0 {
		return u.If("attribute_not_exists($)", attr)
	}
	return u.If("$ = ?", attr, ms)
}

// recordDelivery sets fields from item on the stored item pk/sk under the conditions cond adds,
// removing those item leaves out; a failed condition is told apart by the stored item it returns:
// none is not_found, else invalid_state.
func (s *Store) recordDelivery(ctx context.Context, op, what, pk, sk string, item any, fields []string, cond func(*dynamo.Update) *dynamo.Update) error {
	u, err := s.fieldsUpdate(pk, sk, item, fields)
	if err != nil {
		return wrap(op, err)
	}
	u = cond(u.If("attribute_exists($)", attrPK))
	err = u.IncludeItemInCondCheckFail(true).Run(ctx)
	var ce *types.ConditionalCheckFailedException
	if errors.As(err, &ce) {
		if len(ce.Item) == 0 {
			return kiln.NotFound(what)
		}
		return kiln.Errorf(kiln.EInvalidState, "%s: taken or recorded by another worker", what)
	}
	return wrap(op, err)
}

// buildDeliveryFields are the attributes RecordBuildDelivery writes, the GSI4 keys following them.
var buildDeliveryFields = []string{"autoDeployStatus", "autoDeployError", "autoDeployAttempts", "autoDeployNextAt",
	attrGSI4PK, attrGSI4SK}

// RecordBuildDelivery updates the delivery attributes (and the GSI4 keys) on the condition that
// the build is complete, its delivery pending or delivering and its autoDeployNextAt still
// expectedNextAt.
func (s *Store) RecordBuildDelivery(ctx context.Context, b *kiln.Build, expectedNextAt time.Time) error {
	c := *b
	c.Status = kiln.StatusComplete
	return s.recordDelivery(ctx, "record build delivery", "build", orgPK(b.OrganizationID), buildSK(b.ID),
		newBuildItem(&c), buildDeliveryFields, func(u *dynamo.Update) *dynamo.Update {
			u = u.If("$ = ? AND $ IN (?, ?)", "status", string(kiln.StatusComplete),
				"autoDeployStatus", string(kiln.AutoDeployPending), string(kiln.AutoDeployDelivering))
			return nextAtIs(u, "autoDeployNextAt", toDueMS(expectedNextAt))
		})
}

// RecordWebhookDelivery updates the mutable attributes on the condition that the delivery is
// pending and its nextAttemptAt is still expectedNextAt.
func (s *Store) RecordWebhookDelivery(ctx context.Context, d *kiln.WebhookDelivery, expectedNextAt time.Time) error {
	return s.recordDelivery(ctx, "record webhook delivery", "webhook delivery", orgPK(d.OrganizationID),
		deliverySK(d.WebhookID, d.ID), newDeliveryItem(d), deliveryMutable, func(u *dynamo.Update) *dynamo.Update {
			return nextAtIs(u.If("$ = ?", "status", string(kiln.DeliveryPending)), "nextAttemptAt", toDueMS(expectedNextAt))
		})
}

// QueuedBuildDeliveries counts the organization's complete builds (GSI3 "ORG#<org>#STATUS#complete")
// whose autoDeployStatus is pending or delivering, up to upTo.
func (s *Store) QueuedBuildDeliveries(ctx context.Context, orgID string, upTo int) (int, error) {
	if upTo < 1 {
		return 0, nil
	}
	n := 0
	for _, st := range []kiln.AutoDeployStatus{kiln.AutoDeployPending, kiln.AutoDeployDelivering} {
		q := listQuery{index: indexGSI3, pkAttr: attrGSI3PK, skAttr: attrGSI3SK,
			pk: statusBuildsPK(orgID, kiln.StatusComplete), filters: []eqFilter{{"autoDeployStatus", string(st)}}}
		items, _, err := queryPage(ctx, s, q, upTo-n, func(*itemKeys) string { return "" })
		if err != nil {
			return 0, wrap("queued build deliveries", err)
		}
		if n += len(items); n >= upTo {
			return upTo, nil
		}
	}
	return n, nil
}

// QueuedWebhookDeliveries counts the organization's deliveries (SK "DELIVERY#...") that are
// pending, up to upTo.
func (s *Store) QueuedWebhookDeliveries(ctx context.Context, orgID string, upTo int) (int, error) {
	if upTo < 1 {
		return 0, nil
	}
	q := listQuery{pkAttr: attrPK, skAttr: attrSK, pk: orgPK(orgID), skPrefix: prefixDelivery,
		filters: []eqFilter{{"status", string(kiln.DeliveryPending)}}}
	items, _, err := queryPage(ctx, s, q, upTo, func(*itemKeys) string { return "" })
	if err != nil {
		return 0, wrap("queued webhook deliveries", err)
	}
	return len(items), nil
}
