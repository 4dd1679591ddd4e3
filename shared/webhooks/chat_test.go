package webhooks

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
	"github.com/kilnbuild/kiln/shared/storefixture"
	"github.com/kilnbuild/kiln/shared/webhooks/chat"
)

// chatHook makes an active chat webhook of the organization whose sealed URL is url, told of
// events.
func (w *hookWorld) chatHook(t testing.TB, orgID string, format kiln.WebhookFormat, url string, events ...kiln.WebhookEvent) *kiln.Webhook {
	t.Helper()
	at := w.clock()
	h := &kiln.Webhook{ID: kiln.NewID(), OrganizationID: orgID, Format: format, URL: chat.Mask(url), Active: true,
		Events: events, CreatedAt: at, UpdatedAt: at}
	h.Secret = w.sealer.Seal([]byte(url), SecretAD(h.ID))
	if err := w.st.CreateWebhook(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	return h
}

// sendDue makes one attempt of every due delivery.
func (w *hookWorld) sendDue(t testing.TB, d *Sender) {
	t.Helper()
	due, err := w.st.DueWebhookDeliveries(context.Background(), w.clock(), store.MaxLimit, store.MaxLimit)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range due {
		if err := d.AttemptOne(context.Background(), x.OrganizationID, x.WebhookID, x.ID); err != nil {
			t.Fatal(err)
		}
	}
}

// deliveries lists the webhook's deliveries, oldest first.
func (w *hookWorld) deliveries(t testing.TB, h *kiln.Webhook) []*kiln.WebhookDelivery {
	t.Helper()
	ds, _, err := w.st.ListWebhookDeliveries(context.Background(), h.OrganizationID, h.ID, store.Page{})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(ds)
	return ds
}

// A chat webhook gets its service's message, unsigned, at its sealed URL; a kiln webhook of the
// same organization still gets kiln's signed event. Slack answers 200 "ok", Discord 204.
func TestChatDeliveries(t *testing.T) {
	for _, tt := range []struct {
		format kiln.WebhookFormat
		answer func(w http.ResponseWriter)
		check  func(t *testing.T, body []byte)
	}{
		{kiln.FormatSlack, func(w http.ResponseWriter) { w.Write([]byte("ok")) }, func(t *testing.T, body []byte) {
			var m struct {
				Text   string `json:"text"`
				Blocks []struct {
					Type string `json:"type"`
				} `json:"blocks"`
			}
			if err := json.Unmarshal(body, &m); err != nil || !strings.HasPrefix(m.Text, "Build #1 of Shooter failed") || len(m.Blocks) == 0 || m.Blocks[0].Type != "section" {
				t.Errorf("slack body %s (%v): want text and section blocks", body, err)
			}
		}},
		{kiln.FormatDiscord, status(http.StatusNoContent), func(t *testing.T, body []byte) {
			var m struct {
				Content string `json:"content"`
				Embeds  []struct {
					Title string `json:"title"`
					URL   string `json:"url"`
					Color int    `json:"color"`
				} `json:"embeds"`
				AllowedMentions struct {
					Parse []string `json:"parse"`
				} `json:"allowed_mentions"`
			}
			if err := json.Unmarshal(body, &m); err != nil || m.Content != "Build #1 of Shooter failed" || len(m.Embeds) != 1 ||
				!strings.HasPrefix(m.Embeds[0].URL, "https://kiln.example.com/console/builds/") || m.AllowedMentions.Parse == nil {
				t.Errorf("discord body %s (%v): want content, one embed linking the build, allowed_mentions.parse []", body, err)
			}
		}},
	} {
		t.Run(string(tt.format), func(t *testing.T) {
			w := newHookWorld(t)
			org := w.org(t)
			p := storefixture.Project(t, w.st, org, w.clock())
			chatRC, kilnRC := newRecorder(t, tt.answer), newRecorder(t, status(http.StatusNoContent))
			ch := w.chatHook(t, org, tt.format, chatRC.URL+"/services/T0/B0/secret-token", kiln.ChatEvents...)
			w.hook(t, org, kilnRC.URL, "whsec_x")
			d := w.dispatcher()
			d.PublicURL, d.Render = "https://kiln.example.com", func(context.Context, kiln.WebhookEvent, *kiln.Build, time.Time) ([]byte, error) {
				return []byte(`{"kiln":true}`), nil
			}
			b := storefixture.Build(t, w.st, org, kiln.StatusFailed, w.clock(), func(b *kiln.Build) {
				b.ProjectID, b.FailureReason, b.FinishedAt = p.ID, "compile error", new(w.clock())
			})
			d.BuildChanged(t.Context(), b)
			w.sendDue(t, d)

			got := chatRC.requests()
			if len(got) != 1 {
				t.Fatalf("chat receiver got %d requests, want 1", len(got))
			}
			if got[0].path != "/services/T0/B0/secret-token" {
				t.Errorf("chat request to %q, want the sealed URL's path", got[0].path)
			}
			tt.check(t, got[0].body)
			if h := got[0].header; h.Get("X-Kiln-Signature") != "" || h.Get("Content-Type") != "application/json" {
				t.Errorf("chat request headers %v: want JSON, unsigned", h)
			}
			if del := w.deliveries(t, ch); len(del) != 1 || del[0].Status != kiln.DeliverySucceeded || del[0].Event != kiln.EventBuildFailed {
				t.Errorf("chat deliveries %+v: want one succeeded build.failed", del)
			}
			if k := kilnRC.requests(); len(k) != 1 || string(k[0].body) != `{"kiln":true}` || k[0].header.Get("X-Kiln-Signature") == "" {
				t.Errorf("kiln receiver got %d requests (%v): want kiln's signed event", len(k), k)
			}
		})
	}
}

// build.fixed goes out, after build.complete, when the setting's build that finished last
// before the completed one had failed.
func TestBuildFixed(t *testing.T) {
	type earlier struct {
		status   kiln.BuildStatus
		finished time.Duration // after the first build's creation; 0: not finished
	}
	// The completed build finishes at 10m.
	for _, tt := range []struct {
		name    string
		history []earlier
		fixed   bool
	}{
		{"first build", nil, false},
		{"after a failure", []earlier{{kiln.StatusFailed, time.Minute}}, true},
		{"after a success", []earlier{{kiln.StatusFailed, time.Minute}, {kiln.StatusComplete, 2 * time.Minute}}, false},
		{"after a failure, a running and a superseded build", []earlier{{kiln.StatusFailed, time.Minute}, {kiln.StatusRunning, 0}, {kiln.StatusSuperseded, 3 * time.Minute}}, true},
		{"a failure that finished after it", []earlier{{kiln.StatusComplete, time.Minute}, {kiln.StatusFailed, 20 * time.Minute}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newHookWorld(t)
			org := w.org(t)
			rc := newRecorder(t, status(http.StatusNoContent))
			h := w.hook(t, org, rc.URL, "whsec_x")
			h.Events = []kiln.WebhookEvent{kiln.EventBuildComplete, kiln.EventBuildFixed}
			if err := w.st.UpdateWebhook(t.Context(), h); err != nil {
				t.Fatal(err)
			}
			d := w.dispatcher()
			d.Render = func(_ context.Context, e kiln.WebhookEvent, _ *kiln.Build, _ time.Time) ([]byte, error) {
				return []byte(`{"type":"` + string(e) + `"}`), nil
			}
			setting, start := kiln.NewID(), w.clock()
			for i, e := range tt.history {
				storefixture.Build(t, w.st, org, e.status, start.Add(time.Duration(i)*time.Second), func(b *kiln.Build) {
					b.BuildSettingID = setting
					if e.finished > 0 {
						b.FinishedAt = new(start.Add(e.finished))
					}
				})
			}
			// Another setting's failure does not count.
			storefixture.Build(t, w.st, org, kiln.StatusFailed, start, func(b *kiln.Build) { b.FinishedAt = new(start.Add(5 * time.Minute)) })
			b := storefixture.Build(t, w.st, org, kiln.StatusComplete, start.Add(time.Minute), func(b *kiln.Build) {
				b.BuildSettingID, b.FinishedAt = setting, new(start.Add(10*time.Minute))
			})
			d.BuildChanged(t.Context(), b)
			var events []kiln.WebhookEvent
			for _, x := range w.deliveries(t, h) {
				events = append(events, x.Event)
			}
			want := []kiln.WebhookEvent{kiln.EventBuildComplete}
			if tt.fixed {
				want = append(want, kiln.EventBuildFixed)
			}
			if !slices.Equal(events, want) {
				t.Fatalf("deliveries %v, want %v", events, want)
			}
		})
	}
}
