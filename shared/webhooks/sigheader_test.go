package webhooks

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

func TestCheckSignatureHeader(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"X-BuildPixel-Signature", true},
		{"X-Hub-Signature", true},
		{"X-My-Studio-2-Signature", true},
		{"X-Kiln-Signature", false},
		{"x-kiln-signature", false},
		{"X-Kiln-Event-Signature", false},
		{"X-Signature", false},
		{"BuildPixel-Signature", false},
		{"X-Build Pixel-Signature", false},
		{"X-BuildPixel-Signature\r\nX-Evil: 1", false},
		{"X-BuildPixel_Signature", false},
		{"X-" + strings.Repeat("a", 60) + "-Signature", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := CheckSignatureHeader(tt.name) == ""; got != tt.ok {
				t.Fatalf("CheckSignatureHeader(%q) ok = %v, want %v", tt.name, got, tt.ok)
			}
		})
	}
}

// A webhook with a signature header gets the X-Kiln-Signature value under that header too,
// spelled as the webhook names it; the body signed is the one Stamp finished, fresh per attempt.
func TestAttemptSendsTheExtraSignatureHeaderOverTheStampedBody(t *testing.T) {
	w := newHookWorld(t)
	rc := newRecorder(t, status(http.StatusNoContent))
	const secret = "whsec_receiver-knows-this"
	h := w.hook(t, w.org(t), rc.URL+"/hooks", secret)
	h.SignatureHeader = "X-BuildPixel-Signature"
	if err := w.st.UpdateWebhook(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	del := w.delivery(t, h, `{"stored":true}`)
	d := w.dispatcher()
	var stamped []time.Time
	d.Stamp = func(ctx context.Context, event kiln.WebhookEvent, payload []byte, now time.Time) ([]byte, error) {
		stamped = append(stamped, now)
		return []byte(`{"stamped":"` + now.Format(time.RFC3339) + `"}`), nil
	}
	if err := d.AttemptOne(t.Context(), h.OrganizationID, h.ID, del.ID); err != nil {
		t.Fatal(err)
	}
	reqs := rc.requests()
	if len(reqs) != 1 || len(stamped) != 1 {
		t.Fatalf("%d requests, %d stamps; want 1 and 1", len(reqs), len(stamped))
	}
	r := reqs[0]
	if want := `{"stamped":"` + w.clock().Format(time.RFC3339) + `"}`; string(r.body) != want {
		t.Fatalf("body %s, want the stamped %s", r.body, want)
	}
	kilnSig, extra := r.header.Get("X-Kiln-Signature"), r.header.Get("X-BuildPixel-Signature")
	if !verify(secret, r.body, kilnSig) || extra != kilnSig {
		t.Fatalf("X-Kiln-Signature %q, X-BuildPixel-Signature %q: want both the signature of the body sent", kilnSig, extra)
	}
	if got := w.get(t, del); string(got.Payload) != `{"stored":true}` {
		t.Fatalf("the stored payload became %s; the stamp is per attempt", got.Payload)
	}
}
