package github

import (
	"context"
	"fmt"
	"testing"

	"github.com/kilnbuild/kiln/shared/github/githubtest"
)

// seedRepos adds studio's repositories, one per case of the depth rule, plus one of another
// installation.
func seedRepos(f *fixture) {
	files := func(path string) map[string]string {
		return map[string]string{"README.md": "hello", "Source/Main.cpp": "int main() {}", path: uprojectJSON}
	}
	f.gh.AddRepo(studio, "studio/Shooter", true, "main").Commit("main", "init", "Ada Lovelace", files("Shooter.uproject"))
	f.gh.AddRepo(studio, "studio/depth3", false, "main").Commit("main", "init", "Ada Lovelace", files("a/b/c/Game.uproject"))
	f.gh.AddRepo(studio, "studio/depth4", true, "main").Commit("main", "init", "Ada Lovelace", files("a/b/c/d/Game.uproject"))
	f.gh.AddRepo(studio, "studio/empty", true, "main")
	f.gh.AddRepo(studio, "studio/plain", true, "trunk").Commit("trunk", "init", "Ada Lovelace", map[string]string{"README.md": "no game"})
	f.gh.AddRepo(elsewhere, "elsewhere/secret", true, "main").Commit("main", "init", "Eve", files("Secret.uproject"))
}

func TestReposPagingAndDetection(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	seedRepos(f)
	ctx := context.Background()
	type item struct {
		name     string
		detected bool
	}
	pages := []struct {
		after, next string
		want        []item
	}{
		{"", "studio/empty", []item{{"studio/depth3", true}, {"studio/depth4", false}, {"studio/empty", false}}},
		{"studio/empty", "", []item{{"studio/plain", false}, {"studio/Shooter", true}}},
	}
	for _, p := range pages {
		f.gh.ResetRequests()
		got, next, err := f.c.Repos(ctx, studio, p.after, 3)
		if err != nil {
			t.Fatal(err)
		}
		if next != p.next || len(got) != len(p.want) {
			t.Fatalf("after %q: %d repos, next %q; want %d, next %q", p.after, len(got), next, len(p.want), p.next)
		}
		trees := 0
		for i, r := range got {
			if r.FullName != p.want[i].name || r.UprojectDetected != p.want[i].detected {
				t.Errorf("after %q: item %d = %s detected=%v, want %+v", p.after, i, r.FullName, r.UprojectDetected, p.want[i])
			}
			if r.FullName != "studio/empty" {
				trees++
			}
		}
		// One tree listing per non-empty repository of the page, and no call per file.
		if n := f.gh.Requests(githubtest.RouteTree); n != trees {
			t.Errorf("after %q: %d tree requests, want %d", p.after, n, trees)
		}
		if n := f.gh.Requests(githubtest.RouteContents); n != 0 {
			t.Errorf("after %q: %d contents requests, want none", p.after, n)
		}
	}

	// The tree listings are cached by tree sha: listing again reads no tree.
	f.gh.ResetRequests()
	if _, _, err := f.c.Repos(ctx, studio, "", 10); err != nil {
		t.Fatal(err)
	}
	if n := f.gh.Requests(githubtest.RouteTree); n != 0 {
		t.Fatalf("second listing made %d tree requests, want 0", n)
	}
}

func TestReposReadsEveryGitHubPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for i := range 105 {
		f.gh.AddRepo(studio, fmt.Sprintf("studio/r%03d", i), false, "main")
	}
	got, next, err := f.c.Repos(context.Background(), studio, "studio/r099", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || got[0].FullName != "studio/r100" || next != "" {
		t.Fatalf("got %d repos from %v, next %q", len(got), got, next)
	}
	if n := f.gh.Requests(githubtest.RouteInstallationRepos); n != 2 {
		t.Fatalf("%d repository list requests, want 2 pages of 100", n)
	}
	if got[0].CloneURL != f.gh.WebURL()+"studio/r100.git" || got[0].Private {
		t.Fatalf("repo fields: %+v", got[0])
	}
}

func TestTruncatedTreeFallsBackToWalking(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	files := map[string]string{"a/b/c/Game.uproject": "{}", "a/b/c/d/Deep.uproject": "{}", "x/y.txt": "", "z.txt": ""}
	f.gh.AddRepo(studio, "studio/huge", true, "main").Commit("main", "init", "Ada", files)
	f.gh.SetTreeLimit(2)
	info, err := f.c.DetectUproject(context.Background(), studio, "studio/huge", "")
	if err != nil {
		t.Fatal(err)
	}
	if info.Path != "a/b/c/Game.uproject" {
		t.Fatalf("found %s", info.Path)
	}
	// One truncated listing, then trees of "", a, a/b, a/b/c and x (never a/b/c/d).
	if n := f.gh.Requests(githubtest.RouteTree); n != 6 {
		t.Fatalf("%d tree requests, want 6", n)
	}
}
