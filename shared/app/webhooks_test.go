package app

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// hookReceiver records webhook deliveries and checks their signatures with the secret.
type hookReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	secret string
	got    []map[string]any
	bad    int
	fail   int // answer 500 to this many requests first
}

func newHookReceiver(t *testing.T) *hookReceiver {
	hr := &hookReceiver{}
	hr.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		hr.mu.Lock()
		defer hr.mu.Unlock()
		if hr.fail > 0 {
			hr.fail--
			w.WriteHeader(500)
			return
		}
		m := hmac.New(sha256.New, []byte(hr.secret))
		m.Write(body)
		if r.Header.Get("X-Kiln-Signature") != "sha256="+hex.EncodeToString(m.Sum(nil)) || r.Header.Get("Content-Type") != "application/json" {
			hr.bad++
			w.WriteHeader(400)
			return
		}
		var ev map[string]any
		json.Unmarshal(body, &ev)
		ev["_event"], ev["_delivery"] = r.Header.Get("X-Kiln-Event"), r.Header.Get("X-Kiln-Delivery")
		hr.got = append(hr.got, ev)
		w.WriteHeader(204)
	}))
	t.Cleanup(hr.Close)
	return hr
}

func (hr *hookReceiver) events() []map[string]any {
	hr.mu.Lock()
	defer hr.mu.Unlock()
	return append([]map[string]any(nil), hr.got...)
}

func TestOrganizationWebhooks(t *testing.T) {
	w := newWorld(t, loopbackAllowed)
	hr := newHookReceiver(t)
	hr.fail = 1 // the first delivery is retried
	base := "/organizations/" + w.orgID + "/webhooks"
	created := w.do(t, "POST", base, w.token, map[string]any{"url": hr.URL + "/hooks", "events": []string{"build.created", "build.running", "build.complete"}})
	if created.Status != 201 || len(field(t, created.Body, "secret")) != 46 || created.Body["active"] != true {
		t.Fatalf("create: %d %s", created.Status, created.Raw)
	}
	hr.mu.Lock()
	hr.secret = field(t, created.Body, "secret")
	hr.mu.Unlock()
	hook := field(t, created.Body, "id")
	if r := w.do(t, "GET", base+"/"+hook, w.token, nil); r.Status != 200 || r.Body["secret"] != nil {
		t.Fatalf("get shows the secret: %s", r.Raw)
	}
	for _, bad := range []string{`{"url":"ftp://x","events":["build.created"]}`, `{"url":"https://x.example/h","events":[]}`, `{"url":"https://x.example/h","events":["build.started"]}`, `{"events":["build.created"]}`} {
		wantError(t, w.do(t, "POST", base, w.token, bad), 400, "validation_failed")
	}
	wantError(t, w.do(t, "GET", base, addUser(t, w.testService, w.orgID, "member"), nil), 403, "insufficient_scope")
	other := bootstrapOrg(t, w.testService, "Other")
	wantError(t, w.do(t, "GET", "/organizations/"+other.orgID+"/webhooks/"+hook, other.token, nil), 404, "not_found")

	pid := w.addShooter(t)
	sid := w.addSetting(t, pid, nil)["id"].(string)
	id := w.trigger(t, pid, sid, "")
	w.waitEnded(t, id)
	deadline := time.Now().Add(20 * time.Second)
	for len(hr.events()) < 3 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	evs := hr.events()
	seen := map[string]bool{}
	for _, ev := range evs {
		data := ev["data"].(map[string]any)
		if ev["organizationId"] != w.orgID || data["build"].(map[string]any)["id"] != id || data["project"].(map[string]any)["id"] != pid || ev["type"] != ev["_event"] {
			t.Errorf("event %v", ev)
		}
		seen[ev["type"].(string)] = true
	}
	if len(evs) != 3 || !seen["build.created"] || !seen["build.running"] || !seen["build.complete"] || hr.bad != 0 {
		t.Fatalf("received %d events %v (%d badly signed)", len(evs), seen, hr.bad)
	}
	// The receiver has the events; the sender records each answer just after it.
	var (
		dl   response
		dels []map[string]any
	)
	for settled := false; !settled; {
		dl = w.do(t, "GET", base+"/"+hook+"/deliveries?limit=10", w.token, nil)
		dels = items(t, dl)
		settled = time.Now().After(deadline)
		for i, d := range dels {
			if d["status"] == "pending" {
				break
			}
			settled = settled || i == len(dels)-1
		}
		if !settled {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if dl.Status != 200 || len(dels) != 3 {
		t.Fatalf("deliveries: %s", dl.Raw)
	}
	retried := false
	for _, d := range dels {
		if d["status"] != "succeeded" {
			t.Errorf("delivery %v", d)
		}
		retried = retried || d["attempts"] == float64(2)
	}
	if !retried {
		t.Errorf("no delivery shows the retry: %v", dels)
	}
	r := w.do(t, "POST", base+"/"+hook+"/deliveries/"+dels[0]["id"].(string)+"/redeliver", w.token, nil)
	if r.Status != 202 || field(t, r.Body, "status") != "pending" {
		t.Fatalf("redeliver: %d %s", r.Status, r.Raw)
	}
	for len(hr.events()) < 4 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := hr.events(); len(got) != 4 || got[3]["_delivery"] != field(t, r.Body, "id") {
		t.Fatalf("redelivery not received: %d events", len(got))
	}
	// Inactive webhooks get nothing; deleting one removes it.
	if r := w.do(t, "PATCH", base+"/"+hook, w.token, map[string]any{"active": false}); r.Status != 200 || r.Body["active"] != false {
		t.Fatalf("patch: %s", r.Raw)
	}
	w.waitEnded(t, w.trigger(t, pid, sid, ""))
	time.Sleep(300 * time.Millisecond)
	if n := len(hr.events()); n != 4 {
		t.Fatalf("an inactive webhook received events: %d", n)
	}
	if list := items(t, w.do(t, "GET", base, w.token, nil)); len(list) != 1 {
		t.Fatalf("list: %v", list)
	}
	if r := w.do(t, "DELETE", base+"/"+hook, w.token, nil); r.Status != 204 {
		t.Fatalf("delete: %d", r.Status)
	}
	wantError(t, w.do(t, "GET", base+"/"+hook+"/deliveries", w.token, nil), 404, "not_found")
}
