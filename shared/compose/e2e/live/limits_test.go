package live

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestLimits: a socket watches at most 100 builds (the 101st join is rate_limited, and leaving
// one makes room); a free organization connects at most 20 sockets at once, and the 21st's
// connect error names the limit and the plan.
func TestLimits(t *testing.T) {
	e2e.Both(t, func(t *testing.T, d e2e.Deployment) {
		w := e2e.NewWorld(t, d)
		pid := w.AddShooter(t)
		sid := w.AddSetting(t, pid, map[string]any{})["id"].(string)
		ids := make([]string, 0, 101)
		for range 101 {
			r := w.Do(t, "POST", "/projects/"+pid+"/build-settings/"+sid+"/trigger", w.Token, nil)
			if r.Status != 202 {
				t.Fatalf("trigger: %d %s", r.Status, r.Raw)
			}
			ids = append(ids, e2e.Field(t, r.Body, "buildId"))
		}
		c := e2e.NewLiveClient(t)
		c.Connect("many", w.URL(), w.Token)
		c.WaitOne(30*time.Second, "connect", e2e.Is("many", "connect"))
		for _, id := range ids[:100] {
			c.Do(map[string]any{"op": "join", "name": "many", "buildId": id, "ack": true})
		}
		acks := c.Wait(60*time.Second, 100, "100 joins", e2e.Is("many", "ack"))
		for _, a := range acks {
			if string(a.Res) != `{"ok":true}` {
				t.Fatalf("join %s: %s", a.BuildID, a.Res)
			}
		}
		c.Do(map[string]any{"op": "join", "name": "many", "buildId": ids[100], "ack": true})
		over := c.Wait(30*time.Second, 101, "the 101st join", e2e.Is("many", "ack"))[100]
		if over.Field("error") != "rate_limited" || !strings.Contains(over.Field("message"), "100") {
			t.Fatalf("101st join: %s", over.Res)
		}
		c.Do(map[string]any{"op": "leave", "name": "many", "buildId": ids[0], "ack": true})
		c.Do(map[string]any{"op": "join", "name": "many", "buildId": ids[100], "ack": true})
		if again := c.Wait(30*time.Second, 103, "a join after a leave", e2e.Is("many", "ack"))[102]; string(again.Res) != `{"ok":true}` {
			t.Fatalf("join after leaving one: %s", again.Res)
		}

		w.SetPlan(t, w.OrgID, "free", nil)
		for i := range 19 { // "many" is the first of 20
			c.Connect(fmt.Sprint("s", i), w.URL(), w.Token)
		}
		c.Wait(60*time.Second, 19, "19 more connects", func(e e2e.LiveEvent) bool { return e.Ev == "connect" && strings.HasPrefix(e.Name, "s") })
		c.Connect("over", w.URL(), w.Token)
		e := c.WaitOne(30*time.Second, "the 21st socket's connect_error", e2e.Is("over", "connect_error"))
		if !strings.HasPrefix(e.Message, "plan_limit_reached: ") || !strings.Contains(e.Message, "20") || !strings.Contains(e.Message, "free") {
			t.Fatalf("21st socket: %q", e.Message)
		}
		c.Do(map[string]any{"op": "close", "name": "s0"})
		c.WaitOne(30*time.Second, "s0 closed", e2e.Is("s0", "disconnect"))
		waitConnects(t, c, w.URL(), w.Token, "again")
	})
}

// waitConnects connects a socket, retrying while a closed one may not be counted out yet.
func waitConnects(t *testing.T, c *e2e.LiveClient, url, token, name string) {
	t.Helper()
	for i := range 20 {
		n := fmt.Sprint(name, i)
		c.Connect(n, url, token)
		e := c.WaitOne(30*time.Second, n+" connect", func(e e2e.LiveEvent) bool {
			return e.Name == n && (e.Ev == "connect" || e.Ev == "connect_error")
		})
		if e.Ev == "connect" {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatal("no room for a socket after one closed")
}
