package app

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

func TestTriggerAndListBuilds(t *testing.T) {
	w := newWorld(t, loopbackAllowed)
	pid := w.addShooter(t)
	linux := w.addSetting(t, pid, nil)["id"].(string)
	win := w.addSetting(t, pid, map[string]any{"platform": "Win64", "buildType": "Development", "autoDeploy": true, "uploadBuildUrl": "http://127.0.0.1:9/upload"})["id"].(string)
	w.restart(t, func(c *Config) { c.OutboundAllow = nil }) // loopback, allowed when saved, no longer is
	trigger := func(sid, body string) response {
		return w.do(t, "POST", "/projects/"+pid+"/build-settings/"+sid+"/trigger", w.token, body)
	}
	r := trigger(linux, "")
	if r.Status != 202 || field(t, r.Body, "status") != "pending" || field(t, r.Body, "projectId") != pid || field(t, r.Body, "buildSettingId") != linux || r.Body["number"] != float64(1) || len(r.Body) != 5 {
		t.Fatalf("trigger: %d %s", r.Status, r.Raw)
	}
	first := field(t, r.Body, "buildId")
	second := field(t, trigger(linux, `{"branch":"dev","commit":"0123456789abcdef0123456789abcdef01234567"}`).Body, "buildId")
	third := field(t, trigger(win, `{}`).Body, "buildId")

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
	wantError(t, trigger(strings.Repeat("B", 24), `{}`), 404, "not_found")

	// The builds run: the first and third complete; the second asked for a commit that does not
	// exist, so its checkout fails.
	for _, id := range []string{first, second, third} {
		w.waitEnded(t, id)
	}
	b := w.do(t, "GET", "/builds/"+second, w.token, nil)
	if b.Status != 200 || field(t, b.Body, "branch") != "dev" || field(t, b.Body, "commit") != "0123456789abcdef0123456789abcdef01234567" ||
		field(t, b.Body, "triggeredBy") != "user:"+field(t, w.do(t, "GET", "/auth/me", w.token, nil).Body, "user", "id") ||
		field(t, b.Body, "platform") != "Linux" || field(t, b.Body, "ueVersion") != "5.3" || b.Body["autoDeployStatus"] != nil ||
		field(t, b.Body, "status") != "failed" || !strings.Contains(field(t, b.Body, "failureReason"), "commit") {
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
	if b := w.waitDeploy(t, third); b["autoDeployStatus"] != "failed" || b["status"] != "complete" || !strings.Contains(fmt.Sprint(b["autoDeployError"]), "not allowed") {
		t.Errorf("auto deploy build: %v", b)
	}

	ids := func(query string) []string {
		r := w.do(t, "GET", "/builds"+query, w.token, nil)
		if r.Status != 200 {
			t.Fatalf("GET /builds%s: %d %s", query, r.Status, r.Raw)
		}
		var out []string
		for _, it := range items(t, r) {
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
		wantError(t, w.do(t, "GET", "/builds"+q, w.token, nil), 400, "validation_failed")
	}
	// A cursor is bound to its filters.
	page := w.do(t, "GET", "/builds?limit=1&platform=Linux", w.token, nil)
	cursor := page.Body["nextCursor"].(string)
	if got := items(t, w.do(t, "GET", "/builds?limit=1&platform=Linux&cursor="+url.QueryEscape(cursor), w.token, nil)); len(got) != 1 || got[0]["id"] != first {
		t.Fatalf("second page: %v", got)
	}
	wantError(t, w.do(t, "GET", "/builds?limit=1&platform=Win64&cursor="+url.QueryEscape(cursor), w.token, nil), 400, "validation_failed")

	arts := w.do(t, "GET", "/projects/"+pid+"/artifacts?limit=100", w.token, nil)
	if got := items(t, arts); arts.Status != 200 || len(got) != 2 || got[0]["buildId"] != third || got[1]["buildId"] != first || arts.Body["nextCursor"] != nil {
		t.Fatalf("artifacts: %d %s", arts.Status, arts.Raw)
	}
	if got := items(t, w.do(t, "GET", "/projects/"+pid+"/artifacts?buildSettingId="+linux, w.token, nil)); len(got) != 1 || got[0]["buildId"] != first {
		t.Fatalf("artifacts of the Linux setting: %v", got)
	}
}
