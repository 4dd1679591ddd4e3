package buildsteps

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// countObjects is how many objects the workspace's repository holds, loose and packed.
func countObjects(t *testing.T, ws string) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(gitOut(t, ws, "count-objects", "-v"), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		if k == "count" || k == "in-pack" {
			i, _ := strconv.Atoi(v)
			n += i
		}
	}
	return n
}

func TestCheckoutIsIncrementalAndCleans(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c1 := f.repo.Commit("main", "First version\n\nWith a body.", "Ada Lovelace", projectFiles("v1", nil))
	ws := filepath.Join(t.TempDir(), "ws")
	ctx := context.Background()

	rec := &recorder{}
	out, err := f.agent.Checkout(ctx, CheckoutInput{Workspace: ws, Git: f.source("main", "")}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if out.Dir != ws || out.Commit != c1 || out.CommitMessage != "First version\n\nWith a body." {
		t.Fatalf("first checkout: %+v, want commit %s", out, c1)
	}
	if len(rec.stages) != 1 || rec.stages[0] != StageSync {
		t.Errorf("stages %v, want [sync]", rec.stages)
	}
	firstObjects := countObjects(t, ws)

	// Leftovers of a build: untracked files, caches and a local edit of a tracked file.
	leftovers := map[string]string{
		"junk.txt":                     "x",
		"Saved/Logs/Shooter.log":       "x",
		"Binaries/Linux/Shooter":       "x",
		"Intermediate/Build/a.o":       "keep",
		"DerivedDataCache/ddc.bin":     "keep",
		"Plugins/P/Intermediate/b.o":   "keep",
		"Source/Version.txt":           "edited locally",
		"Content/Maps/Untracked2.umap": "x",
	}
	for name, content := range leftovers {
		p := filepath.Join(ws, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	c2 := f.repo.Commit("main", "Second version", "Ada Lovelace", map[string]string{"Source/Version.txt": "v2"})
	out, err = f.agent.Checkout(ctx, CheckoutInput{Workspace: ws, Git: f.source("main", "")}, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Commit != c2 || out.CommitMessage != "Second version" {
		t.Fatalf("second checkout: %+v, want %s", out, c2)
	}
	if head := gitOut(t, ws, "rev-parse", "HEAD"); head != c2 {
		t.Errorf("HEAD %s, want %s", head, c2)
	}
	for name, content := range leftovers {
		got, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(name)))
		switch {
		case content == "keep" && err != nil:
			t.Errorf("%s: the build cache was removed: %v", name, err)
		case name == "Source/Version.txt" && string(got) != "v2":
			t.Errorf("%s = %q, want the commit's v2", name, got)
		case content == "x" && !errors.Is(err, fs.ErrNotExist):
			t.Errorf("%s: untracked leftover survived (err %v)", name, err)
		}
	}
	// The second fetch brought the new commit's objects (commit, two trees, a blob), not the
	// whole history again.
	if added := countObjects(t, ws) - firstObjects; added < 4 || added >= firstObjects {
		t.Errorf("second fetch added %d objects (first had %d), want only the new ones", added, firstObjects)
	}
	argv, _ := os.ReadFile(f.argvLog)
	if n := strings.Count(string(argv), "init --quiet"); n != 1 {
		t.Errorf("git init ran %d times, want once:\n%s", n, argv)
	}
}

func TestCheckoutCommitOverride(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c1 := f.repo.Commit("main", "one", "Ada", projectFiles("v1", nil))
	c2 := f.repo.Commit("main", "two", "Ada", map[string]string{"Source/Version.txt": "v2"})
	ws := t.TempDir()
	ctx := context.Background()

	for _, tc := range []struct {
		name, commit, want, version string
	}{
		{"an older commit of the branch", c1, c1, "v1"},
		{"the head", "", c2, "v2"},
		{"the head by sha", c2, c2, "v2"},
		{"an abbreviated sha", strings.ToUpper(c1[:10]), c1, "v1"},
	} {
		out, err := f.agent.Checkout(ctx, CheckoutInput{Workspace: ws, Git: f.source("main", tc.commit)}, &recorder{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, _ := os.ReadFile(filepath.Join(ws, "Source", "Version.txt"))
		if out.Commit != tc.want || string(got) != tc.version {
			t.Errorf("%s: commit %s with Version.txt %q, want %s with %q", tc.name, out.Commit, got, tc.want, tc.version)
		}
	}
}

// TestCheckoutRefusesCommitsOffTheBranch: a build labelled with a branch is built from that
// branch: a commit of another branch, one the workspace holds from an earlier build, one that a
// force push took off the branch, or one whose branch is gone fails the checkout with "commit X
// is not on branch Y" (or the branch's absence), and the workspace is not moved to it.
func TestCheckoutRefusesCommitsOffTheBranch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c1 := f.repo.Commit("main", "one", "Ada", projectFiles("v1", nil))
	c2 := f.repo.Commit("main", "two", "Ada", map[string]string{"Source/Version.txt": "v2"})
	feature := f.repo.Commit("feature", "three", "Ada", map[string]string{"Source/Version.txt": "evil"})
	ctx := context.Background()

	// The workspace of "feature" holds the feature commit; a build of "main" in it must not use it.
	ws := t.TempDir()
	if _, err := f.agent.Checkout(ctx, CheckoutInput{Workspace: ws, Git: f.source("feature", feature)}, &recorder{}); err != nil {
		t.Fatalf("feature commit on feature: %v", err)
	}
	if _, err := f.agent.Checkout(ctx, CheckoutInput{Workspace: ws, Git: f.source("main", c1)}, &recorder{}); err != nil {
		t.Fatalf("main commit on main: %v", err)
	}

	// A force push takes c2 off main.
	f.repo.ForcePush("main", c1)
	gone := f.repo.Commit("doomed", "four", "Ada", map[string]string{"Source/Version.txt": "v4"})
	f.repo.DeleteBranch("doomed")
	for _, tc := range []struct {
		name, branch, commit, reason string
	}{
		{"a commit of another branch", "main", feature, "commit " + feature + " is not on branch main"},
		{"an abbreviated commit of another branch", "main", feature[:12], "commit " + feature[:12] + " is not on branch main"},
		{"a commit forced off the branch", "main", c2, "commit " + c2 + " is not on branch main"},
		{"a commit the repository does not have", "main", strings.Repeat("ab", 20), "commit " + strings.Repeat("ab", 20) + " is not on branch main"},
		{"a commit of a deleted branch", "doomed", gone, "checkout failed: remote branch doomed not found"},
	} {
		for _, where := range []string{"fresh", "used"} {
			t.Run(tc.name+" in a "+where+" workspace", func(t *testing.T) {
				dir := ws
				if where == "fresh" {
					dir = t.TempDir()
				}
				rec := &recorder{}
				_, err := f.agent.Checkout(ctx, CheckoutInput{Workspace: dir, Git: f.source(tc.branch, tc.commit)}, rec)
				var fl *Failure
				if !errors.As(err, &fl) || fl.Stage != StageSync || fl.Reason != tc.reason {
					t.Fatalf("err %v, want a sync failure %q", err, tc.reason)
				}
				if got, _ := os.ReadFile(filepath.Join(dir, "Source", "Version.txt")); string(got) == "evil" || string(got) == "v4" {
					t.Fatalf("the workspace was moved to the refused commit (Version.txt %q)", got)
				}
			})
		}
	}
}

func TestCheckoutFailures(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.repo.Commit("main", "one", "Ada", projectFiles("v1", nil))
	missing := strings.Repeat("ab", 20)

	wrongToken := f.source("main", "")
	wrongToken.Token = func(context.Context) (string, error) { return f.token(2), nil }
	noToken := f.source("main", "")
	noToken.Token = nil
	tokenErr := f.source("main", "")
	tokenErr.Token = func(context.Context) (string, error) { return "", errors.New("github down") }

	for _, tc := range []struct {
		name   string
		src    *GitSource
		reason string
	}{
		{"another installation's token", wrongToken, "checkout failed: authentication failed: the repository host refused the installation token"},
		{"no token", noToken, "checkout failed: authentication failed: the repository host refused the installation token"},
		{"no token to be had", tokenErr, "checkout failed: could not get an access token for the repository"},
		{"missing branch", f.source("dev", ""), "checkout failed: remote branch dev not found"},
		{"missing commit", f.source("main", missing), "commit " + missing + " is not on branch main"},
		{"missing abbreviated commit", f.source("main", "abcdef12"), "commit abcdef12 is not on branch main"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			_, err := f.agent.Checkout(context.Background(), CheckoutInput{Workspace: t.TempDir(), Git: tc.src}, rec)
			var fl *Failure
			if !errors.As(err, &fl) {
				t.Fatalf("err %v, want a *Failure", err)
			}
			if fl.Stage != StageSync || fl.Reason != tc.reason {
				t.Errorf("failure %s %q, want sync %q", fl.Stage, fl.Reason, tc.reason)
			}
			if errs := rec.at(LevelError); len(errs) == 0 || errs[len(errs)-1] != tc.reason {
				t.Errorf("error lines %q, want the reason last", errs)
			}
		})
	}

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.agent.Checkout(cancelled, CheckoutInput{Workspace: t.TempDir(), Git: f.source("main", "")}, &recorder{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled checkout: %v, want context.Canceled", err)
	}

	for _, tc := range []struct{ name, url, branch, commit string }{
		{"credentials in the URL", strings.Replace(f.gh.WebURL(), "://", "://x-access-token:secret@", 1) + "studio/Shooter.git", "main", ""},
		{"not http", "file:///etc", "main", ""},
		{"option as branch", f.gh.WebURL() + "studio/Shooter.git", "--upload-pack=touch /tmp/x", ""},
		{"bad commit", f.gh.WebURL() + "studio/Shooter.git", "main", "HEAD~1"},
	} {
		_, err := f.agent.Checkout(context.Background(), CheckoutInput{Workspace: t.TempDir(),
			Git: &GitSource{CloneURL: tc.url, Branch: tc.branch, Commit: tc.commit}}, &recorder{})
		var fl *Failure
		if err == nil || errors.As(err, &fl) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: err %v, want a plain error that does not repeat the URL's credentials", tc.name, err)
		}
	}
}

func TestTokenNeverLeaks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.repo.Commit("main", "one", "Ada", projectFiles("v1", nil))
	ws := t.TempDir()
	rec := &recorder{}
	var errs []string
	ctx := context.Background()
	if _, err := f.agent.Checkout(ctx, CheckoutInput{Workspace: ws, Git: f.source("main", "")}, rec); err != nil {
		t.Fatal(err)
	}
	f.repo.Commit("main", "two", "Ada", map[string]string{"Source/Version.txt": "v2"})
	if _, err := f.agent.Checkout(ctx, CheckoutInput{Workspace: ws, Git: f.source("main", "")}, rec); err != nil {
		t.Fatal(err)
	}
	wrong := f.source("main", "")
	wrong.Token = func(context.Context) (string, error) { return f.token(2), nil }
	for _, src := range []*GitSource{wrong, f.source("nope", ""), f.source("main", strings.Repeat("cd", 20))} {
		_, err := f.agent.Checkout(ctx, CheckoutInput{Workspace: ws, Git: src}, rec)
		if err == nil {
			t.Fatal("a failing checkout succeeded")
		}
		errs = append(errs, err.Error())
	}

	argv, err := os.ReadFile(f.argvLog)
	if err != nil || !strings.Contains(string(argv), "fetch") {
		t.Fatalf("the git wrapper recorded no fetch (%v): %s", err, argv)
	}
	places := map[string]string{"git's argv": string(argv), "the build log": rec.text(), "the errors": strings.Join(errs, "\n")}
	filepath.WalkDir(filepath.Join(ws, ".git"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			data, _ := os.ReadFile(path)
			places[path] = string(data)
		}
		return nil
	})
	if !strings.Contains(places[filepath.Join(ws, ".git", "config")], f.gh.WebURL()+"studio/Shooter.git") {
		t.Errorf(".git/config does not name the clone URL:\n%s", places[filepath.Join(ws, ".git", "config")])
	}
	secrets := f.secrets()
	if len(secrets) < 8 {
		t.Fatalf("only %d secrets recorded", len(secrets))
	}
	for where, text := range places {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("a token shows up in %s", where)
			}
		}
	}
}
