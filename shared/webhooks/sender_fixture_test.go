package webhooks

import (
	"bytes"
	"context"
	"log/slog"
	"net/netip"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/outbound"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
	"github.com/kilnbuild/kiln/shared/storefixture"
)

// hookWorld is a SQLite store with organizations whose webhooks point at receivers the tests
// start, a sealer for their secrets, and a clock the tests move.
type hookWorld struct {
	path   string
	st     *sqlitestore.Store
	sealer *keyring.Sealer
	mu     sync.Mutex
	now    time.Time
}

func newHookWorld(t testing.TB) *hookWorld {
	t.Helper()
	keys, err := keyring.New(bytes.Repeat([]byte{7}, keyring.MasterKeySize))
	if err != nil {
		t.Fatal(err)
	}
	w := &hookWorld{path: filepath.Join(t.TempDir(), "kiln.db"), sealer: keys.Sealer(),
		now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	w.open(t)
	return w
}

// open opens the store file (again, after reopen closed it).
func (w *hookWorld) open(t testing.TB) {
	t.Helper()
	st, err := sqlitestore.Open(context.Background(), w.path)
	if err != nil {
		t.Fatal(err)
	}
	w.st = st
	t.Cleanup(func() { st.Close() })
}

// reopen closes the store and opens its file again: what a restarted process sees.
func (w *hookWorld) reopen(t testing.TB) {
	t.Helper()
	if err := w.st.Close(); err != nil {
		t.Fatal(err)
	}
	w.open(t)
}

func (w *hookWorld) clock() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now
}

func (w *hookWorld) advance(d time.Duration) {
	w.mu.Lock()
	w.now = w.now.Add(d)
	w.mu.Unlock()
}

// dispatcher is a Dispatcher on the world's store and clock, with the outbound-safe client kiln
// uses (loopback allowed: the receivers listen on 127.0.0.1), which does not follow redirects.
func (w *hookWorld) dispatcher() *Sender {
	return &Sender{Store: w.st, Sealer: w.sealer, Attempts: 5, Backoff: 10 * time.Second,
		Client: outbound.NewClient(outbound.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}),
		Logger: slog.New(slog.DiscardHandler), Now: w.clock}
}

// org makes an organization and returns its id.
func (w *hookWorld) org(t testing.TB) string {
	t.Helper()
	org, _ := storefixture.Org(t, w.st, kiln.PlanFree, w.clock())
	return org.ID
}

// hook makes an active webhook of the organization posting to url, signed with secret.
func (w *hookWorld) hook(t testing.TB, orgID, url, secret string) *kiln.Webhook {
	t.Helper()
	at := w.clock()
	h := &kiln.Webhook{ID: kiln.NewID(), OrganizationID: orgID, URL: url, Active: true,
		Events: []kiln.WebhookEvent{kiln.EventBuildComplete, kiln.EventBuildFailed}, CreatedAt: at, UpdatedAt: at}
	h.Secret = w.sealer.Seal([]byte(secret), SecretAD(h.ID))
	if err := w.st.CreateWebhook(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	return h
}

// delivery records a pending delivery of the webhook, due now, with the payload.
func (w *hookWorld) delivery(t testing.TB, h *kiln.Webhook, payload string) *kiln.WebhookDelivery {
	t.Helper()
	at := w.clock()
	d := &kiln.WebhookDelivery{ID: kiln.NewID(), OrganizationID: h.OrganizationID, WebhookID: h.ID,
		Event: kiln.EventBuildComplete, Payload: []byte(payload), Status: kiln.DeliveryPending, CreatedAt: at, UpdatedAt: at}
	if err := w.st.CreateWebhookDelivery(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	return d
}

func (w *hookWorld) get(t testing.TB, d *kiln.WebhookDelivery) *kiln.WebhookDelivery {
	t.Helper()
	got, err := w.st.GetWebhookDelivery(context.Background(), d.OrganizationID, d.WebhookID, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
