package live

import (
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// slowBuild starts a build of the shooter that prints lines for a few seconds; it returns its id.
func slowBuild(t *testing.T, w *e2e.World, env string) string {
	t.Helper()
	pid := w.AddShooter(t)
	w.Shooter.Commit("slow", "Slow build", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": env})
	sid := w.AddSetting(t, pid, map[string]any{"branch": "slow"})["id"].(string)
	return w.Trigger(t, pid, sid, "")
}

// wantWholeLog checks that lines are the build's whole log, in seq order from 1, as the API
// gives it.
func wantWholeLog(t *testing.T, w *e2e.World, id string, lines []e2e.LogLine) {
	t.Helper()
	stored, _ := w.ReadAllPages(t, id, "")
	if len(lines) != len(stored) {
		t.Fatalf("the socket got %d lines, the log has %d", len(lines), len(stored))
	}
	for i, l := range lines {
		if l.Seq != int64(i+1) {
			t.Fatalf("line %d has seq %d: not in order, or one is missing or repeated", i+1, l.Seq)
		}
		if l.Message != stored[i] {
			t.Fatalf("line %d: socket %q, log %q", i+1, l.Message, stored[i])
		}
		if l.Level != "info" && l.Level != "warn" && l.Level != "error" || !strings.HasSuffix(l.Timestamp, "Z") || l.BuildID != id {
			t.Fatalf("line %d: %+v", i+1, l)
		}
	}
}

func logsOf(t *testing.T, events []e2e.LiveEvent) []e2e.LogLine {
	out := make([]e2e.LogLine, len(events))
	for i, e := range events {
		out[i] = e.Line(t)
	}
	return out
}

func TestAJoinedBuildStreamsItsStatusAndEveryLineUntilComplete(t *testing.T) {
	e2e.Both(t, func(t *testing.T, d e2e.Deployment) {
		w := e2e.NewWorld(t, d)
		id := slowBuild(t, w, "FAKE_UAT_SLEEP=2\n")
		c := e2e.NewLiveClient(t)
		c.Connect("a", w.URL(), w.Token)
		c.WaitOne(30*time.Second, "connect", e2e.Is("a", "connect"))
		c.Do(map[string]any{"op": "join", "name": "a", "buildId": id, "fromSeq": 0, "ack": true})
		if ack := c.WaitOne(30*time.Second, "join's ack", e2e.Is("a", "ack")); string(ack.Res) != `{"ok":true}` {
			t.Fatalf("join ack: %s", ack.Res)
		}
		complete := func(e e2e.LiveEvent) bool { return e.Ev == "build:status" && e.Field("status") == "complete" }
		c.WaitOne(3*time.Minute, "build:status complete", complete)
		statuses := c.Events(e2e.Is("a", "build:status"))
		first := statuses[0]
		if first.Field("buildId") != id || first.Field("projectId") == "" || first.Field("buildSettingId") == "" {
			t.Fatalf("first build:status: %s", first.Data)
		}
		// Every line came before the status that ended the build, in order.
		lines := c.Events(func(e e2e.LiveEvent) bool { return e.Ev == "build:log" })
		last := c.Events(complete)[0]
		for _, l := range lines {
			if l.At > last.At {
				t.Fatalf("line %d came after the build's complete status", l.Line(t).Seq)
			}
		}
		wantWholeLog(t, w, id, logsOf(t, lines))
	})
}

func TestConnectRefusesAMissingOrWrongToken(t *testing.T) {
	e2e.Both(t, func(t *testing.T, d e2e.Deployment) {
		w := e2e.NewWorld(t, d)
		c := e2e.NewLiveClient(t)
		c.Connect("none", w.URL(), nil)
		c.Connect("wrong", w.URL(), "kiln_"+strings.Repeat("x", 40))
		for _, name := range []string{"none", "wrong"} {
			e := c.WaitOne(30*time.Second, name+"'s connect_error", e2e.Is(name, "connect_error"))
			if !strings.HasPrefix(e.Message, "invalid_token: ") || e.Field("error") != "invalid_token" {
				t.Fatalf("%s: connect_error %q %s", name, e.Message, e.Data)
			}
		}
		if got := c.Events(e2e.Is("wrong", "connect")); len(got) != 0 {
			t.Fatalf("a wrong token connected: %v", got)
		}
	})
}
