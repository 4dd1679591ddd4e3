package api

import (
	"net/http"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

func TestAddRepoDetectsTheUproject(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	id := w.AddShooter(t)
	r := w.Do(t, "GET", "/projects/"+id, w.Token, nil)
	if r.Status != 200 || e2e.Field(t, r.Body, "sourceControl") != "github" || e2e.Field(t, r.Body, "repoLink") != "studio/shooter" ||
		e2e.Field(t, r.Body, "defaultBranch") != "main" || e2e.Field(t, r.Body, "installationId") != w.Installation ||
		e2e.Field(t, r.Body, "uprojectPath") != "Shooter/Shooter.uproject" || e2e.Field(t, r.Body, "uproject", "projectName") != "Shooter" {
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
	r = w.Do(t, "POST", "/projects/add-repo", w.Token, map[string]any{
		"name": "B game", "installationId": w.Installation, "repoFullName": "studio/multi", "uprojectPath": "B/B.uproject", "defaultBranch": "main",
	})
	if r.Status != http.StatusCreated || e2e.Field(t, r.Body, "uproject", "engineVersion") != "5.4" {
		t.Fatalf("add-repo with path: %d %s", r.Status, r.Raw)
	}
	list := w.Do(t, "GET", "/projects", w.Token, nil)
	if got := e2e.Items(t, list); len(got) != 2 || got[0]["name"] != "B game" || got[1]["id"] != id {
		t.Fatalf("projects newest first: %s", list.Raw)
	}
	if got := e2e.Items(t, w.Do(t, "GET", "/projects?sourceControl=perforce", w.Token, nil)); len(got) != 0 {
		t.Fatalf("perforce filter: %v", got)
	}
	if got := e2e.Items(t, w.Do(t, "GET", "/projects?sourceControl=github&limit=1", w.Token, nil)); len(got) != 1 {
		t.Fatalf("github filter with limit: %v", got)
	}
	e2e.WantError(t, w.Do(t, "GET", "/projects?sourceControl=svn", w.Token, nil), 400, "validation_failed")
}

func TestAddRepoRefusals(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	add := func(body map[string]any) e2e.Response {
		return w.Do(t, "POST", "/projects/add-repo", w.Token, body)
	}
	base := func(changes map[string]any) map[string]any {
		b := map[string]any{"name": "Game", "installationId": w.Installation, "repoFullName": "studio/shooter"}
		for k, v := range changes {
			if v == nil {
				delete(b, k)
			} else {
				b[k] = v
			}
		}
		return b
	}
	e2e.WantError(t, add(base(nil)), 409, "github_not_connected")
	w.Link(t)
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
			e2e.WantError(t, r, tt.status, tt.code)
			if tt.field != "" {
				if _, ok := r.Body["fields"].(map[string]any)[tt.field]; !ok {
					t.Errorf("fields do not name %s: %s", tt.field, r.Raw)
				}
			}
		})
	}
	if got := e2e.Items(t, w.Do(t, "GET", "/projects", w.Token, nil)); len(got) != 0 {
		t.Fatalf("refused requests made projects: %v", got)
	}
}

func TestPatchAndDeleteProject(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	id := w.AddShooter(t)
	path := "/projects/" + id
	r := w.Do(t, "PATCH", path, w.Token, map[string]any{"name": "Shooter 2", "description": "The sequel"})
	if r.Status != 200 || e2e.Field(t, r.Body, "name") != "Shooter 2" || e2e.Field(t, r.Body, "description") != "The sequel" {
		t.Fatalf("patch: %d %s", r.Status, r.Raw)
	}
	before := w.Do(t, "GET", path, w.Token, nil).Raw
	for _, body := range []string{`{"sourceControl":"perforce"}`, `{"repoLink":"x/y"}`, `{"name":""}`, `{"name":null}`, `{"description":5}`, `[]`} {
		r := w.Do(t, "PATCH", path, w.Token, body)
		if r.Status != 400 {
			t.Errorf("PATCH %s: %d", body, r.Status)
		}
	}
	if after := w.Do(t, "GET", path, w.Token, nil).Raw; after != before {
		t.Fatalf("refused PATCHes changed the project:\n%s\n%s", before, after)
	}
	setting := w.AddSetting(t, id, nil)
	trig := w.Do(t, "POST", path+"/build-settings/"+setting["id"].(string)+"/trigger", w.Token, `{}`)
	buildID := e2e.Field(t, trig.Body, "buildId")
	if r := w.Do(t, "DELETE", path, w.Token, nil); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Raw)
	}
	e2e.WantError(t, w.Do(t, "GET", path, w.Token, nil), 404, "not_found")
	e2e.WantError(t, w.Do(t, "GET", path+"/build-settings/"+setting["id"].(string), w.Token, nil), 404, "not_found")
	if r := w.Do(t, "GET", "/builds/"+buildID, w.Token, nil); r.Status != 200 {
		t.Fatalf("build gone with its project: %d", r.Status)
	}
	if got := e2e.Items(t, w.Do(t, "GET", "/builds?projectId="+id, w.Token, nil)); len(got) != 1 {
		t.Fatalf("builds by deleted project: %v", got)
	}
}

func TestAddPerforceNeedsCredentials(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	add := func(body string) e2e.Response { return w.Do(t, "POST", "/projects/add-perforce", w.Token, body) }
	e2e.WantError(t, add(`{"name":"P","depot":"//game","streamPath":"//game/main","uprojectPath":"Game.uproject"}`), 400, "validation_failed")
	e2e.WantError(t, add(`{"name":"P","depot":"//game/main","streamPath":"game/main"}`), 400, "validation_failed")
	e2e.WantError(t, add(`{"name":"P","depot":"//game/main","streamPath":"//game/main","uprojectPath":"Game/Game.uproject"}`), 409, "perforce_not_configured")
}
