package dynamostore

import (
	"context"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// webhookItem is an organization webhook: PK "ORG#<org>", SK "WEBHOOK#<id>".
type webhookItem struct {
	itemKeys
	ID             string   `dynamo:"id"`
	OrganizationID string   `dynamo:"organizationId"`
	Format         string   `dynamo:"format,omitempty"` // left out for kiln webhooks made before formats
	URL            string   `dynamo:"url"`
	Events         []string `dynamo:"events,omitempty"` // a list, in the order given
	Active         bool     `dynamo:"active"`
	// SignatureHeader is left out while "" (no extra signature header).
	SignatureHeader string `dynamo:"signatureHeader,omitempty"`
	Secret          []byte `dynamo:"secret,omitempty"`
	CreatedAt       int64  `dynamo:"createdAt"`
	UpdatedAt       int64  `dynamo:"updatedAt"`
}

// webhookMutable are the attributes UpdateWebhook replaces; the format never changes.
var webhookMutable = []string{"url", "events", "active", "secret", "signatureHeader", "updatedAt"}

func newWebhookItem(w *kiln.Webhook) *webhookItem {
	it := &webhookItem{
		itemKeys: itemKeys{PK: orgPK(w.OrganizationID), SK: webhookSK(w.ID), Type: typeWebhook},
		ID:       w.ID, OrganizationID: w.OrganizationID, Format: string(w.Format), URL: w.URL, Active: w.Active, Secret: w.Secret,
		SignatureHeader: w.SignatureHeader, CreatedAt: toMS(w.CreatedAt), UpdatedAt: toMS(w.UpdatedAt),
	}
	for _, e := range w.Events {
		it.Events = append(it.Events, string(e))
	}
	return it
}

func (it *webhookItem) webhook() *kiln.Webhook {
	w := &kiln.Webhook{
		ID: it.ID, OrganizationID: it.OrganizationID, Format: kiln.WebhookFormat(it.Format), URL: it.URL, Active: it.Active, Secret: it.Secret,
		SignatureHeader: it.SignatureHeader, CreatedAt: fromMS(it.CreatedAt), UpdatedAt: fromMS(it.UpdatedAt),
	}
	for _, e := range it.Events {
		w.Events = append(w.Events, kiln.WebhookEvent(e))
	}
	return w
}

// deliveryItem is a webhook delivery: PK "ORG#<org>", SK "DELIVERY#<webhookId>#<id>", so that a
// webhook's deliveries are one sort-key range. While pending it is also in GSI4 under
// "WEBHOOKS#pending" / dueSK(nextAttemptAt, id), the webhook sender's queue across organizations
// in due order.
type deliveryItem struct {
	itemKeys
	ID             string `dynamo:"id"`
	OrganizationID string `dynamo:"organizationId"`
	WebhookID      string `dynamo:"webhookId"`
	Event          string `dynamo:"event"`
	Payload        []byte `dynamo:"payload,omitempty"` // binary, byte for byte
	Status         string `dynamo:"status"`
	Attempts       int    `dynamo:"attempts"`
	ResponseStatus int    `dynamo:"responseStatus"`
	Error          string `dynamo:"error,omitempty"`
	CreatedAt      int64  `dynamo:"createdAt"`
	UpdatedAt      int64  `dynamo:"updatedAt"`
	NextAttemptAt  int64  `dynamo:"nextAttemptAt,omitempty"` // left out while zero (due now)
}

// deliveryMutable are the attributes UpdateWebhookDelivery replaces; the GSI4 keys follow the
// status: set while pending, removed otherwise.
var deliveryMutable = []string{"status", "attempts", "responseStatus", "error", "updatedAt", "nextAttemptAt",
	attrGSI4PK, attrGSI4SK}

func newDeliveryItem(d *kiln.WebhookDelivery) *deliveryItem {
	keys := itemKeys{PK: orgPK(d.OrganizationID), SK: deliverySK(d.WebhookID, d.ID), Type: typeDelivery}
	if d.Status == kiln.DeliveryPending {
		keys.GSI4PK, keys.GSI4SK = pendingDeliveriesPK, dueSK(toDueMS(d.NextAttemptAt), d.ID)
	}
	return &deliveryItem{
		itemKeys: keys,
		ID:       d.ID, OrganizationID: d.OrganizationID, WebhookID: d.WebhookID, Event: string(d.Event),
		Payload: d.Payload, Status: string(d.Status), Attempts: d.Attempts, ResponseStatus: d.ResponseStatus,
		Error: d.Error, CreatedAt: toMS(d.CreatedAt), UpdatedAt: toMS(d.UpdatedAt), NextAttemptAt: toDueMS(d.NextAttemptAt),
	}
}

func (it *deliveryItem) delivery() *kiln.WebhookDelivery {
	return &kiln.WebhookDelivery{
		ID: it.ID, OrganizationID: it.OrganizationID, WebhookID: it.WebhookID, Event: kiln.WebhookEvent(it.Event),
		Payload: it.Payload, Status: kiln.DeliveryStatus(it.Status), Attempts: it.Attempts,
		ResponseStatus: it.ResponseStatus, Error: it.Error,
		CreatedAt: fromMS(it.CreatedAt), UpdatedAt: fromMS(it.UpdatedAt), NextAttemptAt: fromDueMS(it.NextAttemptAt),
	}
}

// CreateWebhook puts the webhook only if its key is free.
func (s *Store) CreateWebhook(ctx context.Context, w *kiln.Webhook) error {
	err := s.table.Put(newWebhookItem(w)).If(notExists, attrPK).Run(ctx)
	if isCondFailed(err) {
		return kiln.Errorf(kiln.EConflict, "webhook %s already exists", w.ID)
	}
	return wrap("create webhook", err)
}

func (s *Store) GetWebhook(ctx context.Context, orgID, id string) (*kiln.Webhook, error) {
	return get(ctx, s, "get webhook", "webhook", orgPK(orgID), webhookSK(id), (*webhookItem).webhook)
}

// ListWebhooks queries SK begins_with "WEBHOOK#" in ascending order (oldest first), all pages.
func (s *Store) ListWebhooks(ctx context.Context, orgID string) ([]*kiln.Webhook, error) {
	q := listQuery{pkAttr: attrPK, skAttr: attrSK, pk: orgPK(orgID), skPrefix: prefixWebhook, forward: true}
	return listAll(ctx, s, "list webhooks", q, 0, (*webhookItem).webhook)
}

// UpdateWebhook sets the mutable attributes on the existing item.
func (s *Store) UpdateWebhook(ctx context.Context, w *kiln.Webhook) error {
	err := s.updateFields(ctx, orgPK(w.OrganizationID), webhookSK(w.ID), newWebhookItem(w), webhookMutable)
	if isCondFailed(err) {
		return kiln.NotFound("webhook")
	}
	return wrap("update webhook", err)
}

// deliveriesQuery reads a webhook's deliveries: SK begins_with "DELIVERY#<webhookId>#".
func deliveriesQuery(orgID, webhookID string) listQuery {
	return listQuery{pkAttr: attrPK, skAttr: attrSK, pk: orgPK(orgID), skPrefix: deliveryPrefix(webhookID)}
}

// deleteKeys deletes the items with the given keys, without conditions, in transactions of up to
// maxTxItems deletes.
func (s *Store) deleteKeys(ctx context.Context, keys []*itemKeys) error {
	for len(keys) > 0 {
		batch := keys[:min(len(keys), maxTxItems)]
		keys = keys[len(batch):]
		err := s.runTx(ctx, func(tx *dynamo.WriteTx) {
			for _, k := range batch {
				tx.Delete(s.table.Delete(attrPK, k.PK).Range(attrSK, k.SK))
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// DeleteWebhook queries the webhook's deliveries, then deletes the webhook (only if it exists) and
// its deliveries in one transaction. Deliveries beyond what one transaction holds are deleted
// first, in earlier transactions; the webhook goes last, so a failure leaves it in place to retry.
// Once it is gone no delivery can be created for it (CreateWebhookDelivery checks it), so a last
// query sweeps up any delivery created between the first query and the delete.
func (s *Store) DeleteWebhook(ctx context.Context, orgID, id string) error {
	if _, err := s.GetWebhook(ctx, orgID, id); err != nil {
		return err
	}
	keysOnly := func(*itemKeys) string { return "" }
	deliveries, _, err := queryPage(ctx, s, deliveriesQuery(orgID, id), 0, keysOnly)
	if err != nil {
		return wrap("delete webhook", err)
	}
	if n := len(deliveries) - (maxTxItems - 1); n > 0 {
		if err := s.deleteKeys(ctx, deliveries[:n]); err != nil {
			return wrap("delete webhook deliveries", err)
		}
		deliveries = deliveries[n:]
	}
	err = s.runTx(ctx, func(tx *dynamo.WriteTx) {
		tx.Delete(s.table.Delete(attrPK, orgPK(orgID)).Range(attrSK, webhookSK(id)).If(exists, attrPK))
		for _, k := range deliveries {
			tx.Delete(s.table.Delete(attrPK, k.PK).Range(attrSK, k.SK))
		}
	})
	if at := txFailedAt(err); at != nil {
		return kiln.NotFound("webhook")
	}
	if err != nil {
		return wrap("delete webhook", err)
	}
	late, _, err := queryPage(ctx, s, deliveriesQuery(orgID, id), 0, keysOnly)
	if err == nil {
		err = s.deleteKeys(ctx, late)
	}
	return wrap("delete webhook deliveries", err)
}

// CreateWebhookDelivery writes, in one transaction, a check that the webhook exists and the
// delivery (only if absent).
func (s *Store) CreateWebhookDelivery(ctx context.Context, d *kiln.WebhookDelivery) error {
	err := s.runTx(ctx, func(tx *dynamo.WriteTx) {
		tx.Check(s.table.Check(attrPK, orgPK(d.OrganizationID)).Range(attrSK, webhookSK(d.WebhookID)).IfExists())
		tx.Put(s.table.Put(newDeliveryItem(d)).If(notExists, attrPK))
	})
	if at := txFailedAt(err); at != nil {
		if at[0] == 0 {
			return kiln.NotFound("webhook")
		}
		return kiln.Errorf(kiln.EConflict, "webhook delivery %s already exists", d.ID)
	}
	return wrap("create webhook delivery", err)
}

func (s *Store) GetWebhookDelivery(ctx context.Context, orgID, webhookID, id string) (*kiln.WebhookDelivery, error) {
	return get(ctx, s, "get webhook delivery", "webhook delivery", orgPK(orgID), deliverySK(webhookID, id), (*deliveryItem).delivery)
}

// ListWebhookDeliveries queries SK begins_with "DELIVERY#<webhookId>#" in descending order:
// newest first.
func (s *Store) ListWebhookDeliveries(ctx context.Context, orgID, webhookID string, p store.Page) ([]*kiln.WebhookDelivery, string, error) {
	q := deliveriesQuery(orgID, webhookID)
	q.start = startKey(p.After, attrPK, orgPK(orgID), attrSK, deliverySK(webhookID, p.After))
	return list(ctx, s, "list webhook deliveries", q, limit(p), func(it *deliveryItem) string { return it.ID }, (*deliveryItem).delivery)
}

// UpdateWebhookDelivery sets the mutable attributes (nextAttemptAt included), and the GSI4 keys while the status is pending
// (removing them otherwise), on the existing item.
func (s *Store) UpdateWebhookDelivery(ctx context.Context, d *kiln.WebhookDelivery) error {
	err := s.updateFields(ctx, orgPK(d.OrganizationID), deliverySK(d.WebhookID, d.ID), newDeliveryItem(d), deliveryMutable)
	if isCondFailed(err) {
		return kiln.NotFound("webhook delivery")
	}
	return wrap("update webhook delivery", err)
}
