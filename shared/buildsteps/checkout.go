package buildsteps

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// GitSource is a git repository to build from, reached over HTTPS.
type GitSource struct {
	// CloneURL is the repository's clone URL as GitHub's API reports it, without credentials.
	CloneURL string
	// Branch is the branch to build.
	Branch string
	// Commit, if set, is the commit to build (a full sha, or an abbreviation): it must be on
	// the branch (reachable from its head), else the checkout fails; "" builds the branch's head.
	Commit string
	// Token returns the password for HTTP basic auth as user x-access-token (a GitHub App
	// installation token); nil for a repository that needs none.
	Token func(ctx context.Context) (string, error)
}

// CheckoutInput says what to check out where.
type CheckoutInput struct {
	// Workspace is the directory of the checkout. The caller reuses one per (project, branch),
	// so that a build fetches only what changed since the last one, and runs one step at a time
	// in it.
	Workspace string
	// Git or Perforce is the source: exactly one is set.
	Git      *GitSource
	Perforce *PerforceSource
}

// CheckoutOutput is the checked-out source.
type CheckoutOutput struct {
	// Dir is the checkout's root: the workspace, as an absolute path.
	Dir string
	// Commit is the full sha checked out; CommitMessage its message, trimmed.
	Commit, CommitMessage string
}

// keepUntracked are the untracked directories (at any depth) that survive between builds of a
// workspace: Unreal's compile intermediates and local derived-data cache, which make the next
// build incremental. Everything else that git does not track, Saved/ and Binaries/ included, is
// removed before each build, so that no output of an earlier build leaks into the next.
var keepUntracked = []string{"Intermediate/", "DerivedDataCache/"}

var shaPattern = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

// Checkout brings the workspace to the commit or changelist to build (stage "sync"). A Perforce
// source is synced (checkoutPerforce). For git, it fetches the branch from the clone URL into
// the workspace's repository, made on first use, checks out its head or the commit asked for (which
// must be on the branch) detached, and removes untracked files but the build caches
// (keepUntracked). Git runs no hooks: a hook a build wrote into .git/hooks never runs.
func (a *Steps) Checkout(ctx context.Context, in CheckoutInput, r Reporter) (CheckoutOutput, error) {
	r.Stage(ctx, StageSync)
	if in.Perforce != nil {
		return a.checkoutPerforce(ctx, in, r)
	}
	if in.Git == nil {
		return CheckoutOutput{}, errors.New("agent: checkout: no git source")
	}
	src := *in.Git
	src.Commit = strings.ToLower(src.Commit)
	if err := checkSource(src); err != nil {
		return CheckoutOutput{}, err
	}
	ws, err := filepath.Abs(in.Workspace)
	if err != nil || in.Workspace == "" {
		return CheckoutOutput{}, fmt.Errorf("agent: checkout: workspace %q: %v", in.Workspace, err)
	}
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return CheckoutOutput{}, fmt.Errorf("agent: checkout: %w", err)
	}
	log := a.logger().With("workspace", ws, "branch", src.Branch, "commit", src.Commit)
	log.InfoContext(ctx, "agent: checkout started")

	token := ""
	if src.Token != nil {
		if token, err = src.Token(ctx); err != nil {
			if ctx.Err() != nil {
				return CheckoutOutput{}, ctx.Err()
			}
			return CheckoutOutput{}, fail(ctx, r, StageSync, err, "checkout failed: could not get an access token for the repository")
		}
	}
	g := newGitRun(a.git(), ws, token, r)
	if err := prepareWorkspace(ctx, g, ws, src); err != nil {
		return CheckoutOutput{}, err
	}
	sha, err := fetch(ctx, g, src)
	if err != nil {
		return CheckoutOutput{}, err
	}
	if _, err := g.run(ctx, true, "checkout", "--quiet", "--force", "--detach", sha); err != nil {
		return CheckoutOutput{}, gitFailure(ctx, r, err, "checkout failed: could not check out %s", short(sha))
	}
	clean := []string{"clean", "-ffdxq"}
	for _, k := range keepUntracked {
		clean = append(clean, "-e", k)
	}
	if _, err := g.run(ctx, true, clean...); err != nil {
		return CheckoutOutput{}, gitFailure(ctx, r, err, "checkout failed: could not clean the workspace")
	}
	info, err := g.run(ctx, false, "log", "-1", "--format=%H%x00%B", "HEAD")
	if err != nil {
		return CheckoutOutput{}, gitFailure(ctx, r, err, "checkout failed: could not read the commit")
	}
	commit, message, _ := strings.Cut(info, "\x00")
	out := CheckoutOutput{Dir: ws, Commit: strings.TrimSpace(commit), CommitMessage: strings.TrimSpace(message)}
	subject, _, _ := strings.Cut(out.CommitMessage, "\n")
	logf(ctx, r, LevelInfo, "Checked out %s (%s): %s", out.Commit, src.Branch, subject)
	log.InfoContext(ctx, "agent: checkout done", "sha", out.Commit)
	return out, nil
}

// checkSource rejects sources that git could take for something else, and URLs with credentials
// (their text is never repeated).
func checkSource(src GitSource) error {
	u, err := url.Parse(src.CloneURL)
	switch {
	case err != nil:
		return errors.New("agent: checkout: the clone URL does not parse")
	case u.User != nil:
		return errors.New("agent: checkout: the clone URL carries credentials")
	case u.Scheme != "https" && u.Scheme != "http" || u.Host == "":
		return errors.New("agent: checkout: the clone URL is not an http(s) URL")
	case !validBranch(src.Branch):
		return fmt.Errorf("agent: checkout: invalid branch name %q", src.Branch)
	case src.Commit != "" && !shaPattern.MatchString(src.Commit):
		return fmt.Errorf("agent: checkout: invalid commit %q", src.Commit)
	}
	return nil
}

// validBranch reports whether name is a branch name git accepts (git check-ref-format's rules).
func validBranch(name string) bool {
	if name == "" || strings.HasPrefix(name, "-") || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") ||
		strings.HasSuffix(name, ".") || strings.HasSuffix(name, ".lock") || name == "@" ||
		strings.Contains(name, "..") || strings.Contains(name, "//") || strings.Contains(name, "@{") ||
		strings.Contains(name, "/.") || strings.HasPrefix(name, ".") {
		return false
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f || strings.ContainsRune(" ~^:?*[\\", c) {
			return false
		}
	}
	return true
}

// prepareWorkspace makes the workspace's repository on first use and points origin at the clone
// URL. A repository that git cannot work with (a checkout killed half-way) is started over.
func prepareWorkspace(ctx context.Context, g *gitRun, ws string, src GitSource) error {
	gitDir := filepath.Join(ws, ".git")
	if fi, err := os.Stat(gitDir); err == nil && fi.IsDir() {
		removeStaleLocks(gitDir, "refs/remotes/origin/"+src.Branch)
		_, err := g.run(ctx, false, "remote", "set-url", "origin", src.CloneURL)
		if err == nil {
			logf(ctx, g.r, LevelInfo, "Updating the workspace from %s", src.CloneURL)
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		logf(ctx, g.r, LevelWarn, "The workspace's repository is damaged; starting a fresh checkout")
	}
	if err := os.RemoveAll(gitDir); err != nil {
		return fmt.Errorf("agent: checkout: %w", err)
	}
	logf(ctx, g.r, LevelInfo, "Fetching %s into a new workspace", src.CloneURL)
	if _, err := g.run(ctx, false, "init", "--quiet"); err != nil {
		return gitFailure(ctx, g.r, err, "checkout failed: could not create the workspace")
	}
	if _, err := g.run(ctx, false, "remote", "add", "origin", src.CloneURL); err != nil {
		return gitFailure(ctx, g.r, err, "checkout failed: could not create the workspace")
	}
	return nil
}

// fetch brings the branch into the workspace's repository (into refs/remotes/origin/<branch>,
// so the next fetch negotiates from it and brings only new objects) and returns the full sha to
// build: the branch's head, or the commit asked for, which must be on the branch (reachable from
// its head): a build labelled with a branch is built from that branch. A commit that the
// fetched branch does not hold is refused without being fetched.
func fetch(ctx context.Context, g *gitRun, src GitSource) (string, error) {
	tracking := "refs/remotes/origin/" + src.Branch
	branchMissing := fmt.Sprintf("remote branch %s not found", src.Branch)
	_, err := g.run(ctx, true, "fetch", "--no-tags", "--no-recurse-submodules", "origin", "+refs/heads/"+src.Branch+":"+tracking)
	if err != nil {
		return "", gitFailure(ctx, g.r, err, "%s", fetchReason(err, branchMissing))
	}
	tip, ok := resolve(ctx, g, tracking)
	if !ok {
		return "", gitFailure(ctx, g.r, ctx.Err(), "checkout failed: %s", branchMissing)
	}
	if src.Commit == "" {
		return tip, nil
	}
	notOnBranch := fmt.Sprintf("commit %s is not on branch %s", src.Commit, src.Branch)
	sha, ok := resolve(ctx, g, src.Commit)
	if !ok {
		return "", gitFailure(ctx, g.r, ctx.Err(), "%s", notOnBranch)
	}
	onBranch, err := isAncestor(ctx, g, sha, tip)
	if err != nil {
		return "", gitFailure(ctx, g.r, err, "checkout failed: could not check that commit %s is on branch %s", src.Commit, src.Branch)
	}
	if !onBranch {
		return "", gitFailure(ctx, g.r, ctx.Err(), "%s", notOnBranch)
	}
	return sha, nil
}

// isAncestor reports whether commit is reachable from tip (git merge-base --is-ancestor: exit 0
// yes, 1 no).
func isAncestor(ctx context.Context, g *gitRun, commit, tip string) (bool, error) {
	_, err := g.run(ctx, false, "merge-base", "--is-ancestor", "--end-of-options", commit, tip)
	var ge *gitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ge) && ge.code == 1:
		return false, nil
	}
	return false, err
}

// resolve returns the full sha of the commit rev names, if the workspace holds it.
func resolve(ctx context.Context, g *gitRun, rev string) (string, bool) {
	out, err := g.run(ctx, false, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(out), true
}

// fetchReason turns a failed fetch into a reason for the customer; notFound says what is missing
// when the remote has no such ref or object.
func fetchReason(err error, notFound string) string {
	var ge *gitError
	if !errors.As(err, &ge) {
		return "checkout failed: could not run git"
	}
	s := strings.ToLower(ge.stderr)
	has := func(subs ...string) bool {
		for _, sub := range subs {
			if strings.Contains(s, sub) {
				return true
			}
		}
		return false
	}
	switch {
	case has("authentication failed", "could not read username", "could not read password",
		"returned error: 401", "invalid username or token", "invalid credentials"):
		return "checkout failed: authentication failed: the repository host refused the installation token"
	case has("repository not found", "' not found", "returned error: 404", "returned error: 403", "permission to", "access denied"):
		return "checkout failed: the repository was not found or the GitHub App has no access to it"
	case has("couldn't find remote ref", "not our ref", "no such remote ref", "unadvertised object", "remote error: upload-pack"):
		return "checkout failed: " + notFound
	case has("could not resolve host", "failed to connect", "connection refused", "timed out", "connection reset",
		"ssl", "tls", "unable to access"):
		return "checkout failed: could not reach the repository host: " + ge.lastLine()
	}
	return "checkout failed: git fetch failed: " + ge.lastLine()
}

// gitFailure is a failed git step as a Failure, or the context's error when the step was
// cancelled.
func gitFailure(ctx context.Context, r Reporter, err error, format string, args ...any) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err == nil {
		err = fmt.Errorf(format, args...)
	}
	return fail(ctx, r, StageSync, err, format, args...)
}

// short abbreviates a sha for messages.
func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
