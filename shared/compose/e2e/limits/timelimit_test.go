package limits

import (
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
)

func TestBuildPastItsTimeLimitIsStopped(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"bwrap", "off"} {
		t.Run(mode, func(t *testing.T) {
			w := e2e.NewWorld(t, e2e.Serve, func(c *serve.Config) { c.Sandbox, c.BuildTimeout = mode, 2*time.Second })
			pid := w.AddShooter(t)
			w.Shooter.Commit("slow", "A very slow cook", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=300\n"})
			sid := w.AddSetting(t, pid, map[string]any{"branch": "slow"})["id"].(string)
			id := w.Trigger(t, pid, sid, "")
			w.WaitBuild(t, id, "running the engine", func(b map[string]any) bool {
				return strings.Contains(w.LogText(t, id), "BUILD COMMAND STARTED")
			})
			b := w.WaitEnded(t, id)
			if b["status"] != "failed" || b["failureReason"] != "time limit" {
				t.Fatalf("build past its limit: %v", b)
			}
			if log := w.LogText(t, id); !strings.Contains(log, "ran longer than its time limit of 2s") {
				t.Errorf("the log does not say why the build stopped:\n%s", log)
			}
			// Every process of the build is gone (the engine's sleeping workers included).
			var left []string
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				if left = e2e.ProcessesUnder(w.Config.Data); len(left) == 0 {
					break
				}
			}
			if len(left) > 0 {
				t.Errorf("processes of the build still run: %v", left)
			}
		})
	}
}

func TestBuildSettingTimeoutMinutes(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve, func(c *serve.Config) { c.BuildTimeout = 2 * time.Hour })
	pid := w.AddShooter(t)
	plain := w.AddSetting(t, pid, nil)
	if plain["timeoutMinutes"] != nil {
		t.Errorf("a new setting's timeoutMinutes: %v, want null", plain["timeoutMinutes"])
	}
	own := w.AddSetting(t, pid, map[string]any{"timeoutMinutes": 90})
	if own["timeoutMinutes"] != float64(90) {
		t.Fatalf("timeoutMinutes: %v", own["timeoutMinutes"])
	}
	path := "/projects/" + pid + "/build-settings/" + own["id"].(string)
	for _, bad := range []any{121, 0, -1, "30", 1.5} {
		r := w.Do(t, "PATCH", path, w.Token, map[string]any{"timeoutMinutes": bad})
		if r.Status != 400 {
			t.Errorf("timeoutMinutes %v: %d %s", bad, r.Status, r.Raw)
		}
	}
	if r := w.Do(t, "GET", path, w.Token, nil); r.Body["timeoutMinutes"] != float64(90) {
		t.Errorf("a refused PATCH changed timeoutMinutes: %v", r.Body["timeoutMinutes"])
	}
	if r := w.Do(t, "PATCH", path, w.Token, map[string]any{"timeoutMinutes": nil}); r.Status != 200 || r.Body["timeoutMinutes"] != nil {
		t.Errorf("null restores the service's limit: %d %s", r.Status, r.Raw)
	}
	r := w.Do(t, "PATCH", path, w.Token, map[string]any{"timeoutMinutes": 200})
	e2e.WantError(t, r, 400, "validation_failed")
	if !strings.Contains(e2e.Field(t, r.Body, "fields", "timeoutMinutes"), "1 to 120") {
		t.Errorf("the error does not say the range: %s", r.Raw)
	}
}
