package dropin

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestPerforcePassword: the product's Perforce setup with a password instead of a ticket, on a
// classic depot path (//depot/Game/...) instead of a stream. kiln logs in (p4 login -a -p), keeps
// the password sealed and never shows it, builds the depot path through its own client view with
// its own ticket, and when the server says that ticket expired, logs in again and builds on. A
// ticket and a password both, a wrong password, or a stream and a depot path both, are refused
// and change nothing.
func TestPerforcePassword(t *testing.T) { e2e.Both(t, perforcePassword) }

func perforcePassword(t *testing.T, dep e2e.Deployment) {
	const password = "hunter2-but-longer"
	p4 := e2e.FakeP4(t, dep)
	state := classicDepot(e2e.P4BuildState())
	state["users"] = map[string]string{} // no ticket of the customer's: kiln logs in for one
	state["passwords"] = map[string]string{"builder": password}
	e2e.SetP4State(t, dep, p4, state)
	w := e2e.NewWorld(t, dep, e2e.WithP4(p4))
	base := "/organizations/" + w.OrgID + "/perforce"

	e2e.WantError(t, w.Do(t, "PATCH", base, w.Token, map[string]any{"serverUrl": "ssl:127.0.0.1:1666", "userName": "builder",
		"ticket": e2e.P4Ticket, "password": password}), 400, "validation_failed")
	e2e.WantError(t, w.Do(t, "PATCH", base, w.Token, map[string]any{"serverUrl": "ssl:127.0.0.1:1666", "userName": "builder",
		"password": "wrong"}), 400, "perforce_auth_failed")
	if org := w.Do(t, "GET", "/organizations/"+w.OrgID, w.Token, nil); org.Body["perforce"] != nil {
		t.Fatalf("refused credentials were saved: %s", org.Raw)
	}

	r := w.Do(t, "PATCH", base, w.Token, map[string]any{"serverUrl": "ssl:127.0.0.1:1666", "userName": "builder", "password": password})
	if r.Status != 200 {
		t.Fatalf("save a password: %d %s", r.Status, r.Raw)
	}
	pf, _ := r.Body["perforce"].(map[string]any)
	if pf["authentication"] != "password" || pf["ticketSet"] != true || pf["ticketExpiresAt"] == nil {
		t.Fatalf("saved credentials: %v", pf)
	}
	if contains(r.Raw, password) {
		t.Fatal("the answer shows the password")
	}

	e2e.WantError(t, w.Do(t, "POST", "/projects/add-perforce", w.Token, map[string]any{
		"name": "Shooter", "depotPath": "//depot/Game/...", "streamPath": "//depot/Game"}), 400, "validation_failed")
	e2e.WantError(t, w.Do(t, "POST", "/projects/add-perforce", w.Token, map[string]any{
		"name": "Shooter", "depotPath": "//depot/Nothing/..."}), 400, "validation_failed")
	// The documentation's project: a depot path, //depot/MyGame/... there.
	r = w.Do(t, "POST", "/projects/add-perforce", w.Token, map[string]any{"name": "Shooter", "depotPath": "//depot/Game/..."})
	if r.Status != 201 || r.Body["depotPath"] != "//depot/Game/..." || r.Body["streamPath"] != nil || r.Body["uprojectPath"] != "Shooter/Shooter.uproject" {
		t.Fatalf("add-perforce on a depot path: %d %s", r.Status, r.Raw)
	}
	pid := e2e.Field(t, r.Body, "id")
	body := documentedSetting("manual")
	delete(body, "branch")
	st := createSetting(t, w, pid, body)
	if st["streamPath"] != "//depot/Game" {
		t.Fatalf("a depot project's setting builds %v, want the path's root", st["streamPath"])
	}
	sid := st["id"].(string)
	b := w.WaitEnded(t, w.Trigger(t, pid, sid, "{}"))
	if b["status"] != "complete" || b["changelist"] != "11" || b["branch"] != "//depot/Game" {
		t.Fatalf("build with kiln's ticket: %v %v (%v)\n%s", b["status"], b["changelist"], b["failureReason"], w.LogText(t, b["id"].(string)))
	}

	// The server now says kiln's ticket expired: kiln logs in again and the build goes on.
	current := readP4State(t, p4)
	ticket := current["users"].(map[string]any)["builder"].(string)
	current["expiredTickets"] = []string{ticket}
	e2e.SetP4State(t, dep, p4, current)
	first := b["id"].(string)
	b = w.WaitEnded(t, w.Trigger(t, pid, sid, `{"changelist": "10"}`))
	if b["status"] != "complete" || b["changelist"] != "10" {
		t.Fatalf("build after the ticket expired: %v (%v)\n%s", b["status"], b["failureReason"], w.LogText(t, b["id"].(string)))
	}
	// As for a stream: the second build starts warm from the first's cache, and the size report
	// compares the two.
	if c, _ := b["cache"].(map[string]any); c["state"] != "warm" || c["fromBuildId"] != first {
		t.Fatalf("the second build of the depot path: cache %v, want warm from %s", b["cache"], first)
	}
	if r := w.Do(t, "GET", "/builds/"+b["id"].(string)+"/size-diff?base="+first, w.Token, nil); r.Status != 200 {
		t.Fatalf("size-diff: %d %s", r.Status, r.Raw)
	}
	if after := readP4State(t, p4); after["users"].(map[string]any)["builder"] == ticket {
		t.Fatal("kiln did not log in again")
	}

	// A submit trigger builds the depot path's push settings, named by its root.
	push := documentedSetting("push")
	delete(push, "branch")
	pushID := createSetting(t, w, pid, push)["id"].(string)
	tok := w.Do(t, "POST", "/organizations/"+w.OrgID+"/perforce/trigger-tokens", w.Token, map[string]any{"name": "helix"})
	if tok.Status != 201 {
		t.Fatalf("trigger token: %d %s", tok.Status, tok.Raw)
	}
	sub := w.Do(t, "POST", "/webhooks/perforce", e2e.Field(t, tok.Body, "token"), map[string]any{"stream": "//depot/Game", "changelist": "10"})
	started, _ := sub.Body["builds"].([]any)
	if sub.Status != 202 || len(started) != 1 {
		t.Fatalf("submit on the depot path: %d %s", sub.Status, sub.Raw)
	}
	if b := w.WaitEnded(t, started[0].(string)); b["status"] != "complete" || b["buildSettingId"] != pushID || b["changelist"] != "10" {
		t.Fatalf("submit build: %v %v (%v)", b["status"], b["changelist"], b["failureReason"])
	}
}

// classicDepot moves the build state's game from the stream //game/main to the classic depot
// path //depot/Game, with no streams at all.
func classicDepot(state map[string]any) map[string]any {
	move := func(p string) string { return strings.Replace(p, "//game/main", "//depot/Game", 1) }
	files := map[string]string{}
	for f, c := range state["files"].(map[string]string) {
		files[move(f)] = c
	}
	state["files"], state["streams"] = files, []string{}
	for _, ch := range state["changes"].([]map[string]any) {
		ch["path"] = move(ch["path"].(string))
		moved := map[string]string{}
		for f, c := range ch["files"].(map[string]string) {
			moved[move(f)] = c
		}
		ch["files"] = moved
	}
	return state
}

func readP4State(t *testing.T, p4 string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(p4 + ".state.json")
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
