package builds

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
)

func TestTriggerAndListBuilds(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve, e2e.LoopbackAllowed)
	pid := w.AddShooter(t)
	linux := w.AddSetting(t, pid, nil)["id"].(string)
	win := w.AddSetting(t, pid, map[string]any{"platform": "Win64", "buildType": "Development", "autoDeploy": true, "uploadBuildUrl": "http://127.0.0.1:9/upload"})["id"].(string)
	w.Restart(t, func(c *serve.Config) { c.OutboundAllow = nil }) // loopback, allowed when saved, no longer is
	trigger := func(sid, body string) e2e.Response {
		return w.Do(t, "POST", "/projects/"+pid+"/build-settings/"+sid+"/trigger", w.Token, body)
	}
	r := trigger(linux, "")
	if r.Status != 202 || e2e.Field(t, r.Body, "status") != "pending" || e2e.Field(t, r.Body, "projectId") != pid || e2e.Field(t, r.Body, "buildSettingId") != linux || r.Body["number"] != float64(1) || len(r.Body) != 5 {
		t.Fatalf("trigger: %d %s", r.Status, r.Raw)
	}
	first := e2e.Field(t, r.Body, "buildId")
	second := e2e.Field(t, trigger(linux, `{"branch":"dev","commit":"0123456789abcdef0123456789abcdef01234567"}`).Body, "buildId")
	third := e2e.Field(t, trigger(win, `{}`).Body, "buildId")

	for _, tt := range []struct{ body, field string }{
		{`{"changelist":"1234"}`, "changelist"},
		{`{"commit":"not-a-sha"}`, "commit"},
		{`{"branch":"bad branch"}`, "branch"},
		{`{"branch":5}`, "branch"},
		{`{"priority":"high"}`, "priority"},
	} {
		r := trigger(linux, tt.body)
		if r.Status != 400 || r.Body["fields"] == nil {
			t.Errorf("trigger %s: %d %s", tt.body, r.Status, r.Raw)
		}
	}
	e2e.WantError(t, trigger(strings.Repeat("B", 24), `{}`), 404, "not_found")

	// The builds run: the first and third complete; the second asked for a commit that does not
	// exist, so its checkout fails.
	for _, id := range []string{first, second, third} {
		w.WaitEnded(t, id)
	}
	b := w.Do(t, "GET", "/builds/"+second, w.Token, nil)
	if b.Status != 200 || e2e.Field(t, b.Body, "branch") != "dev" || e2e.Field(t, b.Body, "commit") != "0123456789abcdef0123456789abcdef01234567" ||
		e2e.Field(t, b.Body, "triggeredBy") != "user:"+e2e.Field(t, w.Do(t, "GET", "/auth/me", w.Token, nil).Body, "user", "id") ||
		e2e.Field(t, b.Body, "platform") != "Linux" || e2e.Field(t, b.Body, "ueVersion") != "5.3" || b.Body["autoDeployStatus"] != nil ||
		e2e.Field(t, b.Body, "status") != "failed" || !strings.Contains(e2e.Field(t, b.Body, "failureReason"), "commit") {
		t.Fatalf("build detail: %d %s", b.Status, b.Raw)
	}
	if lines, ok := b.Body["logLines"].([]any); !ok || len(lines) == 0 {
		t.Errorf("logLines: %v", b.Body["logLines"])
	}
	for _, k := range []string{"startedAt", "finishedAt", "durationMs"} {
		if b.Body[k] == nil {
			t.Errorf("ended build lacks %s", k)
		}
	}
	// Its delivery goes to loopback, which this server may not reach: it fails, the build stays
	// complete.
	if b := w.WaitDeploy(t, third); b["autoDeployStatus"] != "failed" || b["status"] != "complete" || !strings.Contains(fmt.Sprint(b["autoDeployError"]), "not allowed") {
		t.Errorf("auto deploy build: %v", b)
	}

	ids := func(query string) []string {
		r := w.Do(t, "GET", "/builds"+query, w.Token, nil)
		if r.Status != 200 {
			t.Fatalf("GET /builds%s: %d %s", query, r.Status, r.Raw)
		}
		var out []string
		for _, it := range e2e.Items(t, r) {
			if _, has := it["logLines"]; has {
				t.Errorf("list item carries logLines")
			}
			out = append(out, it["id"].(string))
		}
		return out
	}
	cases := map[string][]string{
		"":                                      {third, second, first},
		"?platform=Linux":                       {second, first},
		"?buildSettingId=" + win:                {third},
		"?projectId=" + pid + "&branch=dev":     {second},
		"?status=complete&buildType=Shipping":   {first},
		"?status=failed":                        {second},
		"?status=pending":                       nil,
		"?branch=" + url.QueryEscape("main"):    {third, first},
		"?projectId=" + strings.Repeat("Z", 24): nil,
	}
	for q, want := range cases {
		if got := ids(q); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("GET /builds%s = %v, want %v", q, got, want)
		}
	}
	for _, q := range []string{"?status=done", "?platform=linux", "?buildType=Release", "?projectId=short", "?limit=0"} {
		e2e.WantError(t, w.Do(t, "GET", "/builds"+q, w.Token, nil), 400, "validation_failed")
	}
	// A cursor is bound to its filters.
	page := w.Do(t, "GET", "/builds?limit=1&platform=Linux", w.Token, nil)
	cursor := page.Body["nextCursor"].(string)
	if got := e2e.Items(t, w.Do(t, "GET", "/builds?limit=1&platform=Linux&cursor="+url.QueryEscape(cursor), w.Token, nil)); len(got) != 1 || got[0]["id"] != first {
		t.Fatalf("second page: %v", got)
	}
	e2e.WantError(t, w.Do(t, "GET", "/builds?limit=1&platform=Win64&cursor="+url.QueryEscape(cursor), w.Token, nil), 400, "validation_failed")

	arts := w.Do(t, "GET", "/projects/"+pid+"/artifacts?limit=100", w.Token, nil)
	if got := e2e.Items(t, arts); arts.Status != 200 || len(got) != 2 || got[0]["buildId"] != third || got[1]["buildId"] != first || arts.Body["nextCursor"] != nil {
		t.Fatalf("artifacts: %d %s", arts.Status, arts.Raw)
	}
	if got := e2e.Items(t, w.Do(t, "GET", "/projects/"+pid+"/artifacts?buildSettingId="+linux, w.Token, nil)); len(got) != 1 || got[0]["buildId"] != first {
		t.Fatalf("artifacts of the Linux setting: %v", got)
	}
}
