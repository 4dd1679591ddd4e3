package api

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

func TestBuildSettingLifecycle(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	id := w.AddShooter(t)
	base := "/projects/" + id + "/build-settings"
	s := w.AddSetting(t, id, map[string]any{
		"autoDeploy": true, "uploadBuildUrl": "https://stream.example/upload",
		"uploadBuildAuthHeader": "Bearer upload-secret-123", "notifyOnComplete": true,
	})
	sid := s["id"].(string)
	if s["streamPath"] != nil || s["schedule"] != nil || s["uploadBuildAuthHeaderSet"] != true || s["uprojectPath"] != "Shooter/Shooter.uproject" || s["projectId"] != id {
		t.Fatalf("created: %v", s)
	}
	got := w.Do(t, "GET", base+"/"+sid, w.Token, nil)
	if got.Status != 200 || strings.Contains(got.Raw, "upload-secret") {
		t.Fatalf("get: %d %s", got.Status, got.Raw)
	}
	// The header is sealed at rest: the database file does not hold it in clear.
	for _, f := range []string{"kiln.db", "kiln.db-wal"} {
		data, _ := os.ReadFile(filepath.Join(w.Config.Data, f))
		if strings.Contains(string(data), "upload-secret-123") {
			t.Fatalf("%s holds the upload auth header in clear", f)
		}
	}

	r := w.Do(t, "PATCH", base+"/"+sid, w.Token, map[string]any{"trigger": "scheduled", "schedule": "0 3 * * 1-5", "branch": "dev"})
	if r.Status != 200 || e2e.Field(t, r.Body, "schedule") != "0 3 * * 1-5" || e2e.Field(t, r.Body, "branch") != "dev" || e2e.Field(t, r.Body, "platform") != "Linux" || r.Body["uploadBuildAuthHeaderSet"] != true {
		t.Fatalf("patch: %d %s", r.Status, r.Raw)
	}
	r = w.Do(t, "PATCH", base+"/"+sid, w.Token, map[string]any{"uploadBuildAuthHeader": nil, "autoDeploy": false, "uploadBuildUrl": nil})
	if r.Status != 200 || r.Body["uploadBuildAuthHeaderSet"] != false || r.Body["uploadBuildUrl"] != nil {
		t.Fatalf("clearing: %d %s", r.Status, r.Raw)
	}
	before := w.Do(t, "GET", base+"/"+sid, w.Token, nil).Raw
	bad := []struct {
		body  string
		code  string
		field string
	}{
		{`{"trigger":"manual"}`, "validation_failed", "schedule"},   // schedule left over after the merge
		{`{"schedule":"@hourly"}`, "validation_failed", "schedule"}, // not 5-field cron
		{`{"ueVersion":"5.9"}`, "engine_not_found", "ueVersion"},
		{`{"platform":"PS5"}`, "validation_failed", "platform"},
		{`{"platform":null}`, "validation_failed", "platform"},
		{`{"streamPath":"//game/main"}`, "validation_failed", "streamPath"},
		{`{"autoDeploy":true}`, "validation_failed", "uploadBuildUrl"},
		{`{"uploadBuildUrl":"ftp://x/y"}`, "validation_failed", "uploadBuildUrl"},
		{`{"uploadBuildAuthHeader":"a\nb"}`, "validation_failed", "uploadBuildAuthHeader"},
		{`{"id":"x"}`, "validation_failed", "id"},
		{`{"projectId":"x"}`, "validation_failed", "projectId"},
		{`{"notifyOnComplete":"yes"}`, "bad_request", "notifyOnComplete"},
	}
	for _, tt := range bad {
		r := w.Do(t, "PATCH", base+"/"+sid, w.Token, tt.body)
		e2e.WantError(t, r, 400, tt.code)
		if _, ok := r.Body["fields"].(map[string]any)[tt.field]; !ok {
			t.Errorf("PATCH %s: fields do not name %s: %s", tt.body, tt.field, r.Raw)
		}
	}
	if after := w.Do(t, "GET", base+"/"+sid, w.Token, nil).Raw; after != before {
		t.Fatalf("refused PATCHes changed the setting:\n%s\n%s", before, after)
	}

	second := w.AddSetting(t, id, map[string]any{"platform": "Win64", "ueVersion": "5.3.2"})
	list := e2e.Items(t, w.Do(t, "GET", base, w.Token, nil))
	if len(list) != 2 || list[0]["id"] != sid || list[1]["id"] != second["id"] {
		t.Fatalf("list: %v", list)
	}
	if r := w.Do(t, "DELETE", base+"/"+sid, w.Token, nil); r.Status != 204 {
		t.Fatalf("delete: %d", r.Status)
	}
	e2e.WantError(t, w.Do(t, "GET", base+"/"+sid, w.Token, nil), 404, "not_found")
	if got := w.Do(t, "GET", "/projects/"+id, w.Token, nil); len(got.Body["buildSettings"].([]any)) != 1 {
		t.Fatalf("project detail settings: %s", got.Raw)
	}
}

func TestCreateBuildSettingValidation(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	id := w.AddShooter(t)
	base := "/projects/" + id + "/build-settings"
	tests := []struct {
		name, body, code, field string
	}{
		{"empty", `{}`, "validation_failed", "platform"},
		{"no branch", `{"platform":"Linux","buildType":"Shipping","ueVersion":"5.3","trigger":"manual"}`, "validation_failed", "branch"},
		{"no engine", `{"platform":"Linux","buildType":"Shipping","ueVersion":"4.27","trigger":"manual","branch":"main"}`, "engine_not_found", "ueVersion"},
		{"bad version", `{"platform":"Linux","buildType":"Shipping","ueVersion":"latest","trigger":"manual","branch":"main"}`, "validation_failed", "ueVersion"},
		{"cron without scheduled", `{"platform":"Linux","buildType":"Shipping","ueVersion":"5.3","trigger":"manual","schedule":"0 3 * * *","branch":"main"}`, "validation_failed", "schedule"},
		{"bad cron", `{"platform":"Linux","buildType":"Shipping","ueVersion":"5.3","trigger":"scheduled","schedule":"@hourly","branch":"main"}`, "validation_failed", "schedule"},
		{"unknown field", `{"platform":"Linux","buildType":"Shipping","ueVersion":"5.3","trigger":"manual","branch":"main","colour":"red"}`, "validation_failed", "colour"},
		{"wrong type", `{"platform":"Linux","buildType":"Shipping","ueVersion":5.3,"trigger":"manual","branch":"main"}`, "bad_request", "ueVersion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := w.Do(t, "POST", base, w.Token, tt.body)
			e2e.WantError(t, r, 400, tt.code)
			if _, ok := r.Body["fields"].(map[string]any)[tt.field]; !ok {
				t.Errorf("fields do not name %s: %s", tt.field, r.Raw)
			}
		})
	}
	if got := e2e.Items(t, w.Do(t, "GET", base, w.Token, nil)); len(got) != 0 {
		t.Fatalf("refused creates made settings: %v", got)
	}
	// Organization defaults fill what is left out, but ueVersion: each build resolves it (the
	// .uproject's EngineAssociation before the organization's default).
	w.Do(t, "PATCH", "/organizations/"+w.OrgID, w.Token, `{"defaultProjectSettings":{"platform":"Win64","buildType":"Development","ueVersion":"5.4","trigger":"manual","notifyOnComplete":true}}`)
	r := w.Do(t, "POST", base, w.Token, `{"branch":"main"}`)
	if r.Status != 201 || e2e.Field(t, r.Body, "platform") != "Win64" || r.Body["ueVersion"] != nil || r.Body["notifyOnComplete"] != true {
		t.Fatalf("defaults: %d %s", r.Status, r.Raw)
	}
	e2e.WantError(t, w.Do(t, "POST", "/projects/"+strings.Repeat("A", 24)+"/build-settings", w.Token, `{"branch":"main"}`), 404, "not_found")
}
