package live

import (
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestAnotherOrganizationsBuildIsRefused: a build of another organization is not_found, with an
// acknowledgement and without one (build:error), and nothing of it is sent.
func TestAnotherOrganizationsBuildIsRefused(t *testing.T) {
	e2e.Both(t, func(t *testing.T, d e2e.Deployment) {
		w := e2e.NewWorld(t, d)
		id := slowBuild(t, w, "FAKE_UAT_SLEEP=1\n")
		other := e2e.BootstrapOrg(t, w.Server, "Elsewhere")
		c := e2e.NewLiveClient(t)
		c.Connect("eve", w.URL(), other.Token)
		c.WaitOne(30*time.Second, "connect", e2e.Is("eve", "connect"))
		c.Do(map[string]any{"op": "join", "name": "eve", "buildId": id, "fromSeq": 0, "ack": true})
		ack := c.WaitOne(30*time.Second, "join's ack", e2e.Is("eve", "ack"))
		if ack.Field("error") != "not_found" || ack.Field("message") == "" {
			t.Fatalf("another organization's join acked %s", ack.Res)
		}
		c.Do(map[string]any{"op": "join", "name": "eve", "buildId": id, "fromSeq": 0})
		e := c.WaitOne(30*time.Second, "build:error", e2e.Is("eve", "build:error"))
		if e.Field("error") != "not_found" || e.Field("buildId") != id {
			t.Fatalf("build:error %s", e.Data)
		}
		w.WaitEnded(t, id)
		time.Sleep(500 * time.Millisecond) // the build's last events would have come by now
		for _, ev := range []string{"build:log", "build:status"} {
			if got := c.Events(e2e.Is("eve", ev)); len(got) != 0 {
				t.Fatalf("another organization heard %d %s", len(got), ev)
			}
		}
	})
}

// TestFromSeqReplaysTheLinesAfterIt: a client that joins an ended build with fromSeq gets the
// lines after it, in order, then the status; fromSeq 0 is the whole log.
func TestFromSeqReplaysTheLinesAfterIt(t *testing.T) {
	e2e.Both(t, func(t *testing.T, d e2e.Deployment) {
		w := e2e.NewWorld(t, d)
		id := slowBuild(t, w, "FAKE_UAT_LINES=300\n")
		w.WaitStatus(t, id, "complete")
		stored, _ := w.ReadAllPages(t, id, "")
		if len(stored) < 300 {
			t.Fatalf("the log has %d lines", len(stored))
		}
		c := e2e.NewLiveClient(t)
		c.Connect("a", w.URL(), w.Token)
		c.Connect("b", w.URL(), w.Token)
		c.WaitOne(30*time.Second, "connect", e2e.Is("a", "connect"))
		c.WaitOne(30*time.Second, "connect", e2e.Is("b", "connect"))
		c.Do(map[string]any{"op": "join", "name": "a", "buildId": id, "fromSeq": 0})
		c.Do(map[string]any{"op": "join", "name": "b", "buildId": id, "fromSeq": 250})
		for _, name := range []string{"a", "b"} {
			st := c.WaitOne(60*time.Second, name+"'s status", e2e.Is(name, "build:status"))
			if st.Field("status") != "complete" {
				t.Fatalf("%s: status %s", name, st.Data)
			}
		}
		wantWholeLog(t, w, id, logsOf(t, c.Events(e2e.Is("a", "build:log"))))
		tail := logsOf(t, c.Events(e2e.Is("b", "build:log")))
		if len(tail) != len(stored)-250 || tail[0].Seq != 251 {
			t.Fatalf("fromSeq 250 of %d lines: got %d lines from seq %d", len(stored), len(tail), tail[0].Seq)
		}
		for i, l := range tail {
			if l.Seq != int64(251+i) || l.Message != stored[250+i] {
				t.Fatalf("replayed line %d: %+v", i, l)
			}
		}
	})
}

// TestAReconnectLosesNothing: the transport drops twice while the build prints; the client
// reconnects by itself, joins again from the last seq it had, and ends with every line once.
func TestAReconnectLosesNothing(t *testing.T) {
	e2e.Both(t, func(t *testing.T, d e2e.Deployment) {
		w := e2e.NewWorld(t, d)
		id := slowBuild(t, w, "FAKE_UAT_SLEEP=3\nFAKE_UAT_LINES=200\n")
		c := e2e.NewLiveClient(t)
		c.Connect("a", w.URL(), w.Token, map[string]any{"reconnection": true, "rejoin": true})
		c.WaitOne(30*time.Second, "connect", e2e.Is("a", "connect"))
		c.Do(map[string]any{"op": "join", "name": "a", "buildId": id, "fromSeq": 0})
		c.WaitOne(2*time.Minute, "a first line", e2e.Is("a", "build:log"))
		for i := range 2 {
			c.Do(map[string]any{"op": "drop", "name": "a"})
			c.Wait(30*time.Second, i+2, "a reconnect", e2e.Is("a", "connect"))
		}
		c.WaitOne(3*time.Minute, "complete", func(e e2e.LiveEvent) bool { return e.Ev == "build:status" && e.Field("status") == "complete" })
		// Lines resent after a rejoin start after the last one the client had: each comes once.
		wantWholeLog(t, w, id, logsOf(t, c.Events(e2e.Is("a", "build:log"))))
		if n := len(c.Events(e2e.Is("a", "disconnect"))); n < 2 {
			t.Fatalf("the transport dropped %d times, want 2", n)
		}
	})
}

// TestARevokedTokenOrARemovedMemberIsDisconnected: the socket of a token revoked, and of a
// member removed, ends at once with "io server disconnect"; the owner's stays.
func TestARevokedTokenOrARemovedMemberIsDisconnected(t *testing.T) {
	e2e.Both(t, func(t *testing.T, d e2e.Deployment) {
		w := e2e.NewWorld(t, d)
		member := e2e.AddUser(t, w.Server, w.OrgID, "member")
		memberID := e2e.Field(t, w.Do(t, "GET", "/auth/me", member, nil).Body, "user", "id")
		r := w.Do(t, "POST", "/auth/tokens", w.Token, map[string]any{"name": "watcher"})
		revocable, revocableID := e2e.Field(t, r.Body, "token"), e2e.Field(t, r.Body, "id")
		c := e2e.NewLiveClient(t)
		for name, tok := range map[string]string{"owner": w.Token, "member": member, "revocable": revocable} {
			c.Connect(name, w.URL(), tok)
			c.WaitOne(30*time.Second, name+" connect", e2e.Is(name, "connect"))
		}
		if r := w.Do(t, "DELETE", "/auth/tokens/"+revocableID, w.Token, nil); r.Status != 204 {
			t.Fatalf("revoke: %d %s", r.Status, r.Raw)
		}
		if e := c.WaitOne(30*time.Second, "the revoked token's disconnect", e2e.Is("revocable", "disconnect")); e.Reason != "io server disconnect" {
			t.Fatalf("revoked: disconnect %q", e.Reason)
		}
		if r := w.Do(t, "DELETE", "/organizations/"+w.OrgID+"/members/"+memberID, w.Token, nil); r.Status != 204 {
			t.Fatalf("remove: %d %s", r.Status, r.Raw)
		}
		if e := c.WaitOne(30*time.Second, "the removed member's disconnect", e2e.Is("member", "disconnect")); e.Reason != "io server disconnect" {
			t.Fatalf("removed: disconnect %q", e.Reason)
		}
		// The owner's socket is still there: it joins and hears the build.
		id := slowBuild(t, w, "FAKE_UAT_SLEEP=1\n")
		c.Do(map[string]any{"op": "join", "name": "owner", "buildId": id, "fromSeq": 0, "ack": true})
		if ack := c.WaitOne(30*time.Second, "owner's join", e2e.Is("owner", "ack")); string(ack.Res) != `{"ok":true}` {
			t.Fatalf("owner's join after the others left: %s", ack.Res)
		}
		if got := c.Events(e2e.Is("owner", "disconnect")); len(got) != 0 {
			t.Fatalf("the owner was disconnected: %v", got)
		}
		// The revoked token cannot connect again.
		c.Connect("again", w.URL(), revocable)
		if e := c.WaitOne(30*time.Second, "connect_error", e2e.Is("again", "connect_error")); !strings.HasPrefix(e.Message, "invalid_token") {
			t.Fatalf("revoked token reconnecting: %q", e.Message)
		}
	})
}
