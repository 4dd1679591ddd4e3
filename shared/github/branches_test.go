package github

import (
	"context"
	"fmt"
	"testing"

	"github.com/kilnbuild/kiln/shared/github/githubtest"
)

func TestBranches(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	repo := f.gh.AddRepo(studio, "studio/shooter", true, "main")
	mainSHA := repo.Commit("main", "Initial import\n\nWith a body.", "Ada Lovelace", map[string]string{"README.md": "hi"})
	featSHA := repo.Commit("feature/Login", "Add login screen", "Grace Hopper", map[string]string{"Login.cpp": "//"})
	repo.Commit("release-1.0", "Cut release", "Alan Turing", map[string]string{"VERSION": "1.0"})
	repo.CreateBranches("main", "feature/audio", "FEATURE/caps")
	ctx := context.Background()

	tests := []struct {
		name, q, after string
		limit          int
		want           []string
		next           string
	}{
		{"all", "", "", 10, []string{"feature/audio", "FEATURE/caps", "feature/Login", "main", "release-1.0"}, ""},
		{"first page", "", "", 2, []string{"feature/audio", "FEATURE/caps"}, "FEATURE/caps"},
		{"second page", "", "FEATURE/caps", 2, []string{"feature/Login", "main"}, "main"},
		{"last page", "", "main", 2, []string{"release-1.0"}, ""},
		{"q any case", "FeAt", "", 10, []string{"feature/audio", "FEATURE/caps", "feature/Login"}, ""},
		{"q paged", "feat", "feature/audio", 1, []string{"FEATURE/caps"}, "FEATURE/caps"},
		{"q without match", "hotfix", "", 10, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, next, err := f.c.Branches(ctx, studio, "studio/shooter", tt.q, tt.after, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, b := range got {
				names = append(names, b.Name)
			}
			if fmt.Sprint(names) != fmt.Sprint(tt.want) || next != tt.next {
				t.Fatalf("got %v next %q, want %v next %q", names, next, tt.want, tt.next)
			}
		})
	}

	f.gh.ResetRequests()
	got, _, err := f.c.Branches(ctx, studio, "studio/shooter", "", "", 10)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Branch{
		"main":          {Name: "main", IsDefault: true, Commit: BranchCommit{SHA: mainSHA, Message: "Initial import\n\nWith a body.", Author: "Ada Lovelace"}},
		"feature/Login": {Name: "feature/Login", Commit: BranchCommit{SHA: featSHA, Message: "Add login screen", Author: "Grace Hopper"}},
		"feature/audio": {Name: "feature/audio", Commit: BranchCommit{SHA: mainSHA, Message: "Initial import\n\nWith a body.", Author: "Ada Lovelace"}},
	}
	for _, b := range got {
		if w, ok := want[b.Name]; ok && b != w {
			t.Errorf("branch %s = %+v, want %+v", b.Name, b, w)
		}
	}
	// Every head commit was read by the earlier listings: commits are cached by sha.
	if n := f.gh.Requests(githubtest.RouteCommit); n != 0 {
		t.Fatalf("%d commit requests for cached commits", n)
	}
}

func TestBranchesReadOnlyThePagesCommits(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	repo := f.gh.AddRepo(studio, "studio/many", true, "main")
	repo.Commit("main", "one", "Ada", map[string]string{"a": "1"})
	names := make([]string, 0, 150)
	for i := range 150 {
		names = append(names, fmt.Sprintf("b%03d", i))
	}
	repo.CreateBranches("main", names...)
	got, next, err := f.c.Branches(context.Background(), studio, "studio/many", "b1", "b120", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || got[0].Name != "b121" || next != "b125" {
		t.Fatalf("got %d branches from %+v, next %q", len(got), got[0], next)
	}
	if n := f.gh.Requests(githubtest.RouteBranches); n != 2 {
		t.Errorf("%d branch list requests, want 2 pages of 100", n)
	}
	// The five branches share one head: each page item's commit is fetched once at most.
	if n := f.gh.Requests(githubtest.RouteCommit); n < 1 || n > 5 {
		t.Errorf("%d commit requests, want between 1 and 5", n)
	}
}
