package app

import (
	"net/http"
	"testing"
)

func TestAddRepoDetectsTheUproject(t *testing.T) {
	w := newWorld(t)
	id := w.addShooter(t)
	r := w.do(t, "GET", "/projects/"+id, w.token, nil)
	if r.Status != 200 || field(t, r.Body, "sourceControl") != "github" || field(t, r.Body, "repoLink") != "studio/shooter" ||
		field(t, r.Body, "defaultBranch") != "main" || field(t, r.Body, "installationId") != w.inst ||
		field(t, r.Body, "uprojectPath") != "Shooter/Shooter.uproject" || field(t, r.Body, "uproject", "projectName") != "Shooter" {
		t.Fatalf("project detail: %d %s", r.Status, r.Raw)
	}
	for _, k := range []string{"lastBuildAt", "lastBuildStatus", "depot", "streamPath"} {
		if v, ok := r.Body[k]; !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, ok)
		}
	}
	if s := r.Body["buildSettings"].([]any); len(s) != 0 {
		t.Errorf("new project has settings: %v", s)
	}

	// An explicit path picks one of several.
	r = w.do(t, "POST", "/projects/add-repo", w.token, map[string]any{
		"name": "B game", "installationId": w.inst, "repoFullName": "studio/multi", "uprojectPath": "B/B.uproject", "defaultBranch": "main",
	})
	if r.Status != http.StatusCreated || field(t, r.Body, "uproject", "engineVersion") != "5.4" {
		t.Fatalf("add-repo with path: %d %s", r.Status, r.Raw)
	}
	list := w.do(t, "GET", "/projects", w.token, nil)
	if got := items(t, list); len(got) != 2 || got[0]["name"] != "B game" || got[1]["id"] != id {
		t.Fatalf("projects newest first: %s", list.Raw)
	}
	if got := items(t, w.do(t, "GET", "/projects?sourceControl=perforce", w.token, nil)); len(got) != 0 {
		t.Fatalf("perforce filter: %v", got)
	}
	if got := items(t, w.do(t, "GET", "/projects?sourceControl=github&limit=1", w.token, nil)); len(got) != 1 {
		t.Fatalf("github filter with limit: %v", got)
	}
	wantError(t, w.do(t, "GET", "/projects?sourceControl=svn", w.token, nil), 400, "validation_failed")
}

func TestAddRepoRefusals(t *testing.T) {
	w := newWorld(t)
	add := func(body map[string]any) response { return w.do(t, "POST", "/projects/add-repo", w.token, body) }
	base := func(changes map[string]any) map[string]any {
		b := map[string]any{"name": "Game", "installationId": w.inst, "repoFullName": "studio/shooter"}
		for k, v := range changes {
			if v == nil {
				delete(b, k)
			} else {
				b[k] = v
			}
		}
		return b
	}
	wantError(t, add(base(nil)), 409, "github_not_connected")
	w.link(t)
	tests := []struct {
		name   string
		body   map[string]any
		status int
		code   string
		field  string
	}{
		{"no name", base(map[string]any{"name": nil}), 400, "validation_failed", "name"},
		{"no installation", base(map[string]any{"installationId": nil}), 400, "validation_failed", "installationId"},
		{"bad repo", base(map[string]any{"repoFullName": "shooter"}), 400, "validation_failed", "repoFullName"},
		{"installation as number", base(map[string]any{"installationId": 4242}), 400, "bad_request", "installationId"},
		{"sourceControl is not settable", base(map[string]any{"sourceControl": "perforce"}), 400, "validation_failed", "sourceControl"},
		{"bad uproject path", base(map[string]any{"uprojectPath": "../x.uproject"}), 400, "validation_failed", "uprojectPath"},
		{"other installation", base(map[string]any{"installationId": "9999"}), 404, "not_found", ""},
		{"inaccessible repo", base(map[string]any{"repoFullName": "someone-else/secret"}), 409, "repo_not_accessible", ""},
		{"no uproject", base(map[string]any{"repoFullName": "studio/tools"}), 404, "uproject_not_found", ""},
		{"several uprojects", base(map[string]any{"repoFullName": "studio/multi"}), 409, "multiple_uprojects", ""},
		{"missing uproject path", base(map[string]any{"uprojectPath": "Nope/Nope.uproject"}), 404, "uproject_not_found", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := add(tt.body)
			wantError(t, r, tt.status, tt.code)
			if tt.field != "" {
				if _, ok := r.Body["fields"].(map[string]any)[tt.field]; !ok {
					t.Errorf("fields do not name %s: %s", tt.field, r.Raw)
				}
			}
		})
	}
	if got := items(t, w.do(t, "GET", "/projects", w.token, nil)); len(got) != 0 {
		t.Fatalf("refused requests made projects: %v", got)
	}
}

func TestPatchAndDeleteProject(t *testing.T) {
	w := newWorld(t)
	id := w.addShooter(t)
	path := "/projects/" + id
	r := w.do(t, "PATCH", path, w.token, map[string]any{"name": "Shooter 2", "description": "The sequel"})
	if r.Status != 200 || field(t, r.Body, "name") != "Shooter 2" || field(t, r.Body, "description") != "The sequel" {
		t.Fatalf("patch: %d %s", r.Status, r.Raw)
	}
	before := w.do(t, "GET", path, w.token, nil).Raw
	for _, body := range []string{`{"sourceControl":"perforce"}`, `{"repoLink":"x/y"}`, `{"name":""}`, `{"name":null}`, `{"description":5}`, `[]`} {
		r := w.do(t, "PATCH", path, w.token, body)
		if r.Status != 400 {
			t.Errorf("PATCH %s: %d", body, r.Status)
		}
	}
	if after := w.do(t, "GET", path, w.token, nil).Raw; after != before {
		t.Fatalf("refused PATCHes changed the project:\n%s\n%s", before, after)
	}
	setting := w.addSetting(t, id, nil)
	trig := w.do(t, "POST", path+"/build-settings/"+setting["id"].(string)+"/trigger", w.token, `{}`)
	buildID := field(t, trig.Body, "buildId")
	if r := w.do(t, "DELETE", path, w.token, nil); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Raw)
	}
	wantError(t, w.do(t, "GET", path, w.token, nil), 404, "not_found")
	wantError(t, w.do(t, "GET", path+"/build-settings/"+setting["id"].(string), w.token, nil), 404, "not_found")
	if r := w.do(t, "GET", "/builds/"+buildID, w.token, nil); r.Status != 200 {
		t.Fatalf("build gone with its project: %d", r.Status)
	}
	if got := items(t, w.do(t, "GET", "/builds?projectId="+id, w.token, nil)); len(got) != 1 {
		t.Fatalf("builds by deleted project: %v", got)
	}
}

func TestAddPerforceNeedsCredentials(t *testing.T) {
	w := newWorld(t)
	add := func(body string) response { return w.do(t, "POST", "/projects/add-perforce", w.token, body) }
	wantError(t, add(`{"name":"P","depot":"//game","streamPath":"//game/main","uprojectPath":"Game.uproject"}`), 400, "validation_failed")
	wantError(t, add(`{"name":"P","depot":"//game/main","streamPath":"game/main"}`), 400, "validation_failed")
	wantError(t, add(`{"name":"P","depot":"//game/main","streamPath":"//game/main","uprojectPath":"Game/Game.uproject"}`), 409, "perforce_not_configured")
}
