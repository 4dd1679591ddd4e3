package dropin

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// docReceiver is the product's documented receiver, ported line by line: it reads
// x-buildpixel-signature, wants "sha256=", and compares the HMAC-SHA256 of the raw body with
// the webhook's signing secret in constant time. It records what it accepted.
type docReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	secret   string
	accepted []map[string]any
	rejected int
}

func newDocReceiver(t *testing.T) *docReceiver {
	rc := &docReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rawBody, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if !verifySignature(r.Header.Get("x-buildpixel-signature"), rawBody, rc.secret) {
			rc.rejected++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var ev map[string]any
		if err := json.Unmarshal(rawBody, &ev); err != nil {
			rc.rejected++
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		rc.accepted = append(rc.accepted, ev)
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// verifySignature is the documentation's verifySignature(req, secret).
func verifySignature(sig string, rawBody []byte, secret string) bool {
	if !strings.HasPrefix(sig, "sha256=") {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(rawBody)
	expected := "sha256=" + hex.EncodeToString(m.Sum(nil))
	return hmac.Equal([]byte(sig), []byte(expected))
}

func (rc *docReceiver) setSecret(s string) {
	rc.mu.Lock()
	rc.secret = s
	rc.mu.Unlock()
}

// waitFor waits until the receiver accepted n events of type typ and returns them.
func (rc *docReceiver) waitFor(t *testing.T, typ string, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		rc.mu.Lock()
		var got []map[string]any
		for _, ev := range rc.accepted {
			if ev["type"] == typ {
				got = append(got, ev)
			}
		}
		rejected := rc.rejected
		rc.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the documented receiver accepted %d %s events (rejected %d deliveries), want %d", len(got), typ, rejected, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestDocumentedReceiverVerifiesAndDownloads: a webhook made with signatureHeader
// X-BuildPixel-Signature is verified by the documented receiver; build.complete carries
// data.build.artifactUrl, which downloads the artifact without a token; a redelivery carries a
// fresh URL that works too. Bad header names are refused and change nothing; null removes it.
func TestDocumentedReceiverVerifiesAndDownloads(t *testing.T) { e2e.Both(t, documentedReceiver) }

func documentedReceiver(t *testing.T, dep e2e.Deployment) {
	w := e2e.NewWorld(t, dep, e2e.LoopbackAllowed)
	rc := newDocReceiver(t)
	base := "/organizations/" + w.OrgID + "/webhooks"
	for _, bad := range []string{"X-Kiln-Signature", "x-kiln-signature", "BuildPixel-Signature", "X-BuildPixel-Sig", "X-Build Pixel-Signature"} {
		e2e.WantError(t, w.Do(t, "POST", base, w.Token, map[string]any{"url": rc.URL + "/hooks", "events": []string{"build.complete"},
			"signatureHeader": bad}), 400, "validation_failed")
	}
	if list := e2e.Items(t, w.Do(t, "GET", base, w.Token, nil)); len(list) != 0 {
		t.Fatalf("refused webhooks were made: %v", list)
	}
	created := w.Do(t, "POST", base, w.Token, map[string]any{"url": rc.URL + "/hooks", "events": []string{"build.complete"},
		"signatureHeader": "X-BuildPixel-Signature"})
	if created.Status != http.StatusCreated || created.Body["signatureHeader"] != "X-BuildPixel-Signature" {
		t.Fatalf("create: %d %s", created.Status, created.Raw)
	}
	rc.setSecret(e2e.Field(t, created.Body, "secret"))
	hook := e2e.Field(t, created.Body, "id")

	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)
	// The documented manual trigger: POST .../trigger with '{}'.
	id := w.Trigger(t, pid, sid, "{}")
	if b := w.WaitEnded(t, id); b["status"] != "complete" {
		t.Fatalf("build ended %v: %v", b["status"], b["failureReason"])
	}
	ev := rc.waitFor(t, "build.complete", 1)[0]
	build := ev["data"].(map[string]any)["build"].(map[string]any)
	if build["id"] != id || build["status"] != "complete" || ev["organizationId"] != w.OrgID {
		t.Fatalf("event %v", ev)
	}
	first, _ := build["artifactUrl"].(string)
	if !strings.HasPrefix(first, "http") {
		t.Fatalf("build.complete has no data.build.artifactUrl: %v", build)
	}
	link := w.Do(t, "GET", "/builds/"+id+"/download", w.Token, nil)
	if link.Status != 200 {
		t.Fatalf("download link: %d %s", link.Status, link.Raw)
	}
	got := e2e.FetchArtifact(t, first)
	if e2e.MD5Hex(got) != link.Body["checksumMd5"] {
		t.Fatalf("artifactUrl downloaded %d bytes of md5 %s, want the artifact (%v)", len(got), e2e.MD5Hex(got), link.Body["checksumMd5"])
	}

	// A redelivery is signed and carries a fresh URL that works.
	dels := e2e.Items(t, w.Do(t, "GET", base+"/"+hook+"/deliveries", w.Token, nil))
	if len(dels) != 1 {
		t.Fatalf("deliveries: %v", dels)
	}
	time.Sleep(1100 * time.Millisecond) // the next URL expires a second later at least
	if r := w.Do(t, "POST", base+"/"+hook+"/deliveries/"+dels[0]["id"].(string)+"/redeliver", w.Token, nil); r.Status != http.StatusAccepted {
		t.Fatalf("redeliver: %d %s", r.Status, r.Raw)
	}
	again := rc.waitFor(t, "build.complete", 2)[1]
	second, _ := again["data"].(map[string]any)["build"].(map[string]any)["artifactUrl"].(string)
	if second == "" || second == first {
		t.Fatalf("the redelivery's artifactUrl %q, want a fresh one (the first was %q)", second, first)
	}
	if e2e.MD5Hex(e2e.FetchArtifact(t, second)) != link.Body["checksumMd5"] {
		t.Fatal("the redelivery's artifactUrl does not download the artifact")
	}

	// null removes the header: the documented receiver then rejects what kiln sends.
	e2e.WantError(t, w.Do(t, "PATCH", base+"/"+hook, w.Token, map[string]any{"signatureHeader": "X-Kiln-Signature"}), 400, "validation_failed")
	if r := w.Do(t, "GET", base+"/"+hook, w.Token, nil); r.Body["signatureHeader"] != "X-BuildPixel-Signature" {
		t.Fatalf("a refused PATCH changed the webhook: %s", r.Raw)
	}
	if r := w.Do(t, "PATCH", base+"/"+hook, w.Token, map[string]any{"signatureHeader": nil}); r.Status != 200 || r.Body["signatureHeader"] != nil {
		t.Fatalf("PATCH null: %d %s", r.Status, r.Raw)
	}
}
