package github

import (
	"context"
	"reflect"
	"testing"

	"github.com/kilnbuild/kiln/shared/github/githubtest"
	"github.com/kilnbuild/kiln/shared/kiln"
)

func TestDetectUproject(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	add := func(name string, files map[string]string) {
		f.gh.AddRepo(studio, "studio/"+name, true, "main").Commit("main", "init", "Ada", files)
	}
	add("none", map[string]string{"README.md": "no game here"})
	add("one", map[string]string{"Games/Shooter/Shooter.uproject": uprojectJSON, "Games/Shooter/Source/x.cpp": ""})
	add("several", map[string]string{"B/B.uproject": "{}", "A.uproject": "{}", "a/b/c/C.uproject": "{}"})
	add("deep", map[string]string{"a/b/c/d/Deep.uproject": "{}", "Top.uproject": `{"EngineAssociation": "5.4"}`})
	add("only-deep", map[string]string{"a/b/c/d/Deep.uproject": "{}"})
	add("broken", map[string]string{"Broken.uproject": "{\"Modules\": [],}"})
	f.gh.AddRepo(studio, "studio/empty", true, "main")
	branchy := f.gh.AddRepo(studio, "studio/branchy", true, "main")
	branchy.Commit("main", "init", "Ada", map[string]string{"README.md": ""})
	branchy.Commit("ue5", "add project", "Ada", map[string]string{"Game/Game.uproject": "{}"})
	ctx := context.Background()

	tests := []struct {
		repo, ref  string
		code       string // "" means found
		path       string
		candidates []string
	}{
		{repo: "none", code: kiln.EUprojectNotFound},
		{repo: "empty", code: kiln.EUprojectNotFound},
		{repo: "only-deep", code: kiln.EUprojectNotFound},
		{repo: "one", path: "Games/Shooter/Shooter.uproject"},
		{repo: "deep", path: "Top.uproject"},
		{repo: "several", code: kiln.EMultipleUprojects, candidates: []string{"A.uproject", "B/B.uproject", "a/b/c/C.uproject"}},
		{repo: "broken", code: kiln.EValidation},
		{repo: "branchy", code: kiln.EUprojectNotFound},
		{repo: "branchy", ref: "ue5", path: "Game/Game.uproject"},
		{repo: "branchy", ref: "nope", code: kiln.EValidation},
		{repo: "missing", code: kiln.ERepoNotAccessible},
	}
	for _, tt := range tests {
		t.Run(tt.repo+"@"+tt.ref, func(t *testing.T) {
			f.gh.ResetRequests()
			info, err := f.c.DetectUproject(ctx, studio, "studio/"+tt.repo, tt.ref)
			if tt.code != "" {
				wantCode(t, err, tt.code)
				if tt.candidates != nil {
					var ke *kiln.Error
					if !errorsAs(err, &ke) || !reflect.DeepEqual(ke.Candidates, tt.candidates) {
						t.Fatalf("candidates of %v, want %v", err, tt.candidates)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if info.Path != tt.path {
				t.Fatalf("found %s, want %s", info.Path, tt.path)
			}
			// One tree listing and one file read, never a call per file.
			if n := f.gh.Requests(githubtest.RouteTree) + f.gh.Requests(githubtest.RouteContents); n != 2 {
				t.Fatalf("%d tree and contents requests, want 2", n)
			}
		})
	}

	info, err := f.c.DetectUproject(ctx, studio, "studio/one", "")
	if err != nil || info.ProjectName != "Shooter" || info.EngineVersion != "5.3" || len(info.Modules) != 1 || !info.Plugins[0].Enabled {
		t.Fatalf("parsed %+v, %v", info, err)
	}
}

func TestReadUproject(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	repo := f.gh.AddRepo(studio, "studio/game", true, "main")
	repo.Commit("main", "init", "Ada", map[string]string{"a/b/c/d/Deep.uproject": `{"EngineAssociation": "5.2"}`})
	f.gh.AddRepo(elsewhere, "elsewhere/game", true, "main").Commit("main", "init", "Eve", map[string]string{"X.uproject": "{}"})
	ctx := context.Background()
	tests := []struct {
		repo, ref, path, code string
	}{
		{repo: "studio/game", path: "a/b/c/d/Deep.uproject"}, // an explicit path may be deeper
		{repo: "studio/game", ref: "main", path: "a/b/c/d/Deep.uproject"},
		{repo: "studio/game", path: "Missing.uproject", code: kiln.EUprojectNotFound},
		{repo: "studio/game", path: "a.uproject/../x.uproject", code: kiln.EValidation},
		{repo: "elsewhere/game", path: "X.uproject", code: kiln.ERepoNotAccessible},
	}
	for _, tt := range tests {
		info, err := f.c.ReadUproject(ctx, studio, tt.repo, tt.ref, tt.path)
		if tt.code != "" {
			wantCode(t, err, tt.code)
			continue
		}
		if err != nil || info.Path != tt.path || info.EngineVersion != "5.2" || info.ProjectName != "Deep" {
			t.Fatalf("%+v: %+v, %v", tt, info, err)
		}
	}
}
