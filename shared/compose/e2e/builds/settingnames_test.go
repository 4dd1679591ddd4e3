package builds

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestTriggerBySettingName: the trigger takes a setting's readable name, Platform/BuildType, in
// any case, with @branch where two settings share it; a shared name is validation_failed listing
// them, an unknown one not_found, and neither queues a build.
func TestTriggerBySettingName(t *testing.T) { e2e.Both(t, triggerBySettingName) }

func triggerBySettingName(t *testing.T, dep e2e.Deployment) {
	w := e2e.NewWorld(t, dep)
	pid := w.AddShooter(t)
	dev := w.AddSetting(t, pid, map[string]any{"branch": "dev"})["id"].(string)
	main := w.AddSetting(t, pid, nil)["id"].(string)
	win := w.AddSetting(t, pid, map[string]any{"platform": "Win64", "buildType": "Development"})["id"].(string)
	trigger := func(name string) e2e.Response {
		return w.Do(t, "POST", "/projects/"+pid+"/build-settings/"+url.PathEscape(name)+"/trigger", w.Token, map[string]any{})
	}
	for name, want := range map[string]string{"Linux/Shipping@dev": dev, "linux/shipping@main": main, "Win64/Development": win} {
		r := trigger(name)
		if r.Status != http.StatusAccepted || r.Body["buildSettingId"] != want {
			t.Errorf("trigger %s: %d %s; want a build of %s", name, r.Status, r.Raw, want)
		}
	}
	r := trigger("Linux/Shipping")
	e2e.WantError(t, r, 400, "validation_failed")
	if msg, _ := r.Body["message"].(string); !strings.Contains(msg, "Linux/Shipping@dev ("+dev+")") || !strings.Contains(msg, "Linux/Shipping@main ("+main+")") {
		t.Errorf("a shared name's error does not list the settings: %s", r.Raw)
	}
	e2e.WantError(t, trigger("Mac/Shipping"), 404, "not_found")
	if n := len(e2e.Items(t, w.Do(t, "GET", "/builds?projectId="+pid, w.Token, nil))); n != 3 {
		t.Errorf("%d builds, want the 3 triggered by name", n)
	}
}
