package buildsteps

import (
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kilnbuild/kiln/shared/artifacts/fsartifacts"
	"github.com/kilnbuild/kiln/shared/engines"
	"github.com/kilnbuild/kiln/shared/github/githubtest"
)

// recorder is a Reporter that keeps everything.
type recorder struct {
	mu     sync.Mutex
	stages []Stage
	lines  []LogLine
}

func (r *recorder) Stage(_ context.Context, s Stage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stages = append(r.stages, s)
}

func (r *recorder) Log(_ context.Context, l LogLine) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, l)
}

// text is every line, one per line.
func (r *recorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, l := range r.lines {
		b.WriteString(l.Message)
		b.WriteByte('\n')
	}
	return b.String()
}

// at returns the lines at a level.
func (r *recorder) at(level Level) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, l := range r.lines {
		if l.Level == level {
			out = append(out, l.Message)
		}
	}
	return out
}

// installRunUAT copies the stand-in engine into a temp engines directory as version 5.3 and
// returns its RunUAT.sh.
func installRunUAT(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "5.3"), os.DirFS("../../testdata/fake-engine")); err != nil {
		t.Fatal(err)
	}
	return engines.Dir{Path: dir}.RunUAT("5.3")
}

// fixture is a fake GitHub with the repository studio/Shooter (installation 1; installation 2
// exists too), the stand-in engine, a file artifact store and an agent whose git is a wrapper
// that records its arguments.
type fixture struct {
	gh      *githubtest.Server
	repo    *githubtest.Repo
	runUAT  string
	agent   *Steps
	argvLog string

	mu     sync.Mutex
	tokens []string // every installation token handed out
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{gh: githubtest.New(t)}
	f.gh.AddInstallation(1, "studio")
	f.gh.AddInstallation(2, "elsewhere")
	f.repo = f.gh.AddRepo(1, "studio/Shooter", true, "main")
	f.runUAT = installRunUAT(t)

	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	bin := t.TempDir()
	f.argvLog = filepath.Join(bin, "argv.log")
	wrapper := "#!/bin/sh\nprintf '%s\\n' \"$*\" >>'" + f.argvLog + "'\nexec '" + realGit + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	store, err := fsartifacts.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f.agent = &Steps{Artifacts: store, Git: filepath.Join(bin, "git")}
	return f
}

// token issues an installation token and remembers it.
func (f *fixture) token(installation int64) string {
	tok := f.gh.IssueToken(installation)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens = append(f.tokens, tok)
	return tok
}

// source is the repository's branch (and commit), with installation 1's tokens.
func (f *fixture) source(branch, commit string) *GitSource {
	return &GitSource{CloneURL: f.gh.WebURL() + "studio/Shooter.git", Branch: branch, Commit: commit,
		Token: func(context.Context) (string, error) { return f.token(1), nil }}
}

// secrets are the forms in which an issued token must never show up.
func (f *fixture) secrets() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, tok := range f.tokens {
		out = append(out, tok, base64.StdEncoding.EncodeToString([]byte("x-access-token:"+tok)))
	}
	return out
}

// projectFiles is a small Unreal project: the .uproject, Source/Version.txt and filler.
func projectFiles(version string, extra map[string]string) map[string]string {
	files := map[string]string{
		"Shooter.uproject":   `{"FileVersion": 3, "EngineAssociation": "5.3"}`,
		"Source/Version.txt": version,
	}
	for i := range 20 {
		files["Content/Maps/Map"+string(rune('A'+i))+".umap"] = strings.Repeat("map data ", 50+i)
	}
	for k, v := range extra {
		files[k] = v
	}
	return files
}

// writeProject writes a project directory without git, for engine-only tests.
func writeProject(t *testing.T, fakeUATEnv string) string {
	t.Helper()
	dir := t.TempDir()
	files := projectFiles("plain", nil)
	if fakeUATEnv != "" {
		files["FakeUAT.env"] = fakeUATEnv
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// gitOut runs real git in dir.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}
