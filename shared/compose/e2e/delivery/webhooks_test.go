package delivery

import (
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

func TestOrganizationWebhooks(t *testing.T) { e2e.Both(t, organizationWebhooks) }

func organizationWebhooks(t *testing.T, dep e2e.Deployment) {
	w := e2e.NewWorld(t, dep, e2e.LoopbackAllowed)
	hr := e2e.NewHookReceiver(t)
	hr.Fail = 1 // the first delivery is retried
	base := "/organizations/" + w.OrgID + "/webhooks"
	created := w.Do(t, "POST", base, w.Token, map[string]any{"url": hr.URL + "/hooks", "events": []string{"build.created", "build.running", "build.complete"}})
	if created.Status != 201 || len(e2e.Field(t, created.Body, "secret")) != 46 || created.Body["active"] != true {
		t.Fatalf("create: %d %s", created.Status, created.Raw)
	}
	hr.Mu.Lock()
	hr.Secret = e2e.Field(t, created.Body, "secret")
	hr.Mu.Unlock()
	hook := e2e.Field(t, created.Body, "id")
	if r := w.Do(t, "GET", base+"/"+hook, w.Token, nil); r.Status != 200 || r.Body["secret"] != nil {
		t.Fatalf("get shows the secret: %s", r.Raw)
	}
	for _, bad := range []string{`{"url":"ftp://x","events":["build.created"]}`, `{"url":"https://x.example/h","events":[]}`, `{"url":"https://x.example/h","events":["build.started"]}`, `{"events":["build.created"]}`} {
		e2e.WantError(t, w.Do(t, "POST", base, w.Token, bad), 400, "validation_failed")
	}
	e2e.WantError(t, w.Do(t, "GET", base, e2e.AddUser(t, w.Server, w.OrgID, "member"), nil), 403, "insufficient_scope")
	other := e2e.BootstrapOrg(t, w.Server, "Other")
	e2e.WantError(t, w.Do(t, "GET", "/organizations/"+other.OrgID+"/webhooks/"+hook, other.Token, nil), 404, "not_found")

	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)
	id := w.Trigger(t, pid, sid, "")
	w.WaitEnded(t, id)
	deadline := time.Now().Add(20 * time.Second)
	for len(hr.Events()) < 3 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	evs := hr.Events()
	seen := map[string]bool{}
	for _, ev := range evs {
		data := ev["data"].(map[string]any)
		if ev["organizationId"] != w.OrgID || data["build"].(map[string]any)["id"] != id || data["project"].(map[string]any)["id"] != pid || ev["type"] != ev["_event"] {
			t.Errorf("event %v", ev)
		}
		seen[ev["type"].(string)] = true
	}
	if len(evs) != 3 || !seen["build.created"] || !seen["build.running"] || !seen["build.complete"] || hr.Bad != 0 {
		t.Fatalf("received %d events %v (%d badly signed)", len(evs), seen, hr.Bad)
	}
	// The receiver has the events; the sender records each answer just after it.
	var (
		dl   e2e.Response
		dels []map[string]any
	)
	for settled := false; !settled; {
		dl = w.Do(t, "GET", base+"/"+hook+"/deliveries?limit=10", w.Token, nil)
		dels = e2e.Items(t, dl)
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
	r := w.Do(t, "POST", base+"/"+hook+"/deliveries/"+dels[0]["id"].(string)+"/redeliver", w.Token, nil)
	if r.Status != 202 || e2e.Field(t, r.Body, "status") != "pending" {
		t.Fatalf("redeliver: %d %s", r.Status, r.Raw)
	}
	for len(hr.Events()) < 4 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := hr.Events(); len(got) != 4 || got[3]["_delivery"] != e2e.Field(t, r.Body, "id") {
		t.Fatalf("redelivery not received: %d events", len(got))
	}
	// Inactive webhooks get nothing; deleting one removes it.
	if r := w.Do(t, "PATCH", base+"/"+hook, w.Token, map[string]any{"active": false}); r.Status != 200 || r.Body["active"] != false {
		t.Fatalf("patch: %s", r.Raw)
	}
	w.WaitEnded(t, w.Trigger(t, pid, sid, ""))
	time.Sleep(300 * time.Millisecond)
	if n := len(hr.Events()); n != 4 {
		t.Fatalf("an inactive webhook received events: %d", n)
	}
	if list := e2e.Items(t, w.Do(t, "GET", base, w.Token, nil)); len(list) != 1 {
		t.Fatalf("list: %v", list)
	}
	if r := w.Do(t, "DELETE", base+"/"+hook, w.Token, nil); r.Status != 204 {
		t.Fatalf("delete: %d", r.Status)
	}
	e2e.WantError(t, w.Do(t, "GET", base+"/"+hook+"/deliveries", w.Token, nil), 404, "not_found")
}
