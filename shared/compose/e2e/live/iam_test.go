package live

import (
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestLiveEventsNeedTheirGrants (aws-local): without execute-api:ManageConnections the live
// function cannot greet a socket, which never opens; without it the API function (where hosts
// append lines and report the end) cannot send a line or the end, and the socket hears only what
// the task function sent (running). Each refusal is aws-local's IAM refusing the call as AWS
// would.
func TestLiveEventsNeedTheirGrants(t *testing.T) {
	t.Parallel()
	t.Run("LiveWithoutManageConnections", func(t *testing.T) {
		t.Parallel()
		w := e2e.NewWorld(t, e2e.AWSLocal, e2e.WithTemplate(e2e.WriteTemplate(t, e2e.WithoutAction("live", "execute-api:ManageConnections"))))
		e2e.ExpectRefusals(t, w, "/live is not authorized to perform: execute-api:ManageConnections")
		c := e2e.NewLiveClient(t)
		c.Connect("a", w.URL(), w.Token)
		c.WaitOne(time.Minute, "connect_error", e2e.Is("a", "connect_error"))
		wantRefusal(t, w, "/live is not authorized to perform: execute-api:ManageConnections")
	})
	t.Run("APIWithoutManageConnections", func(t *testing.T) {
		t.Parallel()
		w := e2e.NewWorld(t, e2e.AWSLocal, e2e.WithTemplate(e2e.WriteTemplate(t, e2e.WithoutAction("api", "execute-api:ManageConnections"))))
		e2e.ExpectRefusals(t, w, "/api is not authorized to perform: execute-api:ManageConnections")
		id := slowBuild(t, w, "FAKE_UAT_SLEEP=1\n")
		c := e2e.NewLiveClient(t)
		c.Connect("a", w.URL(), w.Token)
		c.WaitOne(30*time.Second, "connect", e2e.Is("a", "connect"))
		c.Do(map[string]any{"op": "join", "name": "a", "buildId": id})
		c.WaitOne(time.Minute, "running", func(e e2e.LiveEvent) bool { return e.Ev == "build:status" && e.Field("status") == "running" })
		if b := w.WaitEnded(t, id); b["status"] != "complete" {
			t.Fatalf("build ended %v", b["status"])
		}
		wantRefusal(t, w, "/api is not authorized to perform: execute-api:ManageConnections")
		// The hosts' lines come through the API function: the socket hears none of them (a line
		// another function writes, such as the workflow's, may still come).
		stored, _ := w.ReadAllPages(t, id, "")
		if got := len(c.Events(e2e.Is("a", "build:log"))); got*2 >= len(stored) {
			t.Fatalf("the socket heard %d of the %d lines although the API function may not post the hosts' lines", got, len(stored))
		}
		if got := c.Events(func(e e2e.LiveEvent) bool { return e.Ev == "build:status" && e.Field("status") == "complete" }); len(got) != 0 {
			t.Fatalf("the socket heard the end although the API function may not post it")
		}
	})
}

func wantRefusal(t *testing.T, w *e2e.World, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(w.Logs.String(), what) {
		if time.Now().After(deadline) {
			t.Fatalf("aws-local's log has no refusal %q", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
