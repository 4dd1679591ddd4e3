package buildsteps

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kilnbuild/kiln/shared/proctree"
)

// gitRun is one way of running git in a workspace: its environment carries the credentials, and
// everything it logs passes through redact.
type gitRun struct {
	bin    string
	dir    string
	env    []string
	redact *strings.Replacer
	r      Reporter
}

// newGitRun prepares git runs in dir. The installation token, if any, reaches git only through
// the environment, as an http.extraHeader given by GIT_CONFIG_COUNT/KEY/VALUE: never in argv
// (where ps shows it), a URL, a log line or the repository's config.
func newGitRun(bin, dir, token string, r Reporter) *gitRun {
	env := gitEnv(os.Environ())
	// git must not wander up into a repository that holds the workspace.
	env = append(env, "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	secrets := []string{}
	configs := [][2]string{
		// Run nothing the workspace's repository names: a build may have planted hooks or config
		// there (its sandbox keeps .git read-only; this is the second wall).
		{"core.hooksPath", "/dev/null"},
		{"core.fsmonitor", "false"},
		// A build run as a build uid (kiln as root) owns the workspace's files, its top directory
		// included; the .git kiln obeys stays kiln's and read-only to builds, so git may work here.
		{"safe.directory", dir},
		// Never ask anyone for credentials: no helper, no prompt.
		{"credential.helper", ""},
		{"core.askPass", ""},
		// Housekeeping runs inside the step rather than as a daemon that outlives it.
		{"gc.autoDetach", "false"},
		{"maintenance.autoDetach", "false"},
		{"advice.detachedHead", "false"},
	}
	if token != "" {
		basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
		configs = append(configs, [2]string{"http.extraHeader", "Authorization: Basic " + basic})
		secrets = append(secrets, "x-access-token:"+token, token, basic)
	}
	env = append(env, fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(configs)))
	for i, c := range configs {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, c[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, c[1]))
	}
	env = append(env, "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	pairs := []string{}
	for _, s := range secrets {
		pairs = append(pairs, s, "***")
	}
	return &gitRun{bin: bin, dir: dir, env: env, redact: strings.NewReplacer(pairs...), r: r}
}

// gitEnv keeps the inherited environment but drops what could change where git works, what it
// runs or what it traces (GIT_DIR, GIT_TRACE_CURL, GIT_ASKPASS, GIT_CONFIG_*, ...), except the
// TLS settings a host may need.
func gitEnv(environ []string) []string {
	keep := []string{"GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "GIT_EXEC_PATH"}
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if (strings.HasPrefix(name, "GIT_") && !slices.Contains(keep, name)) || name == "SSH_ASKPASS" || name == "LC_ALL" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// gitError is a git run that failed: its exit code and its redacted standard error.
type gitError struct {
	args   string
	code   int
	stderr string
}

func (e *gitError) Error() string {
	return fmt.Sprintf("git %s: exit %d: %s", e.args, e.code, e.stderr)
}

// lastLine is git's last non-empty line of standard error, without its "fatal: " prefix.
func (e *gitError) lastLine() string {
	lines := strings.Split(strings.TrimSpace(e.stderr), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return fmt.Sprintf("exit code %d", e.code)
	}
	return strings.TrimPrefix(strings.TrimPrefix(last, "fatal: "), "error: ")
}

// run runs git with args and returns its standard output. With logged, the command and git's
// standard error go to the build log; else its standard error is only part of the error.
func (g *gitRun) run(ctx context.Context, logged bool, args ...string) (string, error) {
	shown := g.redact.Replace(strings.Join(args, " "))
	if logged {
		logf(ctx, g.r, LevelInfo, "git %s", shown)
	}
	cmd := exec.CommandContext(ctx, g.bin, args...)
	cmd.Dir, cmd.Env = g.dir, g.env
	cmd.WaitDelay = drainWait
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// On cancellation, stop git and its helpers (git-remote-https) together.
	err := proctree.Run(cmd, proctree.Options{KillWithParent: true})
	errText := g.redact.Replace(stderr.String())
	if logged {
		for _, l := range strings.Split(strings.TrimRight(errText, "\n"), "\n") {
			if l = strings.TrimRight(l, "\r"); strings.TrimSpace(l) != "" {
				logf(ctx, g.r, gitLineLevel(l), "%s", l)
			}
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		code, _, ok := exitCode(err)
		if !ok {
			return "", fmt.Errorf("git %s: %w", shown, err)
		}
		return "", &gitError{args: shown, code: code, stderr: strings.TrimSpace(errText)}
	}
	return stdout.String(), nil
}

// removeStaleLocks deletes lock files that a git killed mid-way (a cancelled build) leaves
// behind. The caller runs one checkout of a workspace at a time, so no live git holds them.
func removeStaleLocks(gitDir string, refs ...string) {
	names := []string{"index.lock", "HEAD.lock", "config.lock", "shallow.lock", "packed-refs.lock"}
	for _, ref := range refs {
		names = append(names, ref+".lock")
	}
	for _, name := range names {
		_ = os.Remove(filepath.Join(gitDir, filepath.FromSlash(name)))
	}
}
