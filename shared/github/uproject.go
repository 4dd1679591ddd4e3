package github

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"

	gh "github.com/google/go-github/v62/github"
	"golang.org/x/sync/errgroup"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// MaxUprojectDepth is how many directories deep a .uproject may sit (docs/api.md):
// a/b/c/Game.uproject is found, a/b/c/d/Game.uproject is not.
const MaxUprojectDepth = 3

var errNoBranch = errors.New("no such branch")

// branchTree is what detection learnt of a branch: its head commit and the .uproject paths.
type branchTree struct {
	commit string
	paths  []string
}

// isUproject reports whether a file path is a .uproject at most MaxUprojectDepth directories deep.
func isUproject(p string) bool {
	base := path.Base(p)
	return strings.HasSuffix(base, ".uproject") && len(base) > len(".uproject") &&
		strings.Count(p, "/") <= MaxUprojectDepth
}

// uprojectsAt finds the .uproject files of a branch: one call for the branch's head, then the
// head tree's listing, cached by tree sha (trees are immutable).
func (c *Client) uprojectsAt(ctx context.Context, cl *gh.Client, installationID int64, owner, name, branch string) (branchTree, error) {
	b, err := getBranch(ctx, cl, owner, name, branch)
	if err != nil {
		if statusOf(err) == 404 {
			return branchTree{}, errNoBranch
		}
		return branchTree{}, c.failInstallation("get branch", installationID, err, nil)
	}
	commit, treeSHA := b.GetCommit().GetSHA(), b.GetCommit().GetCommit().GetTree().GetSHA()
	if commit == "" || treeSHA == "" {
		return branchTree{}, c.fail("get branch", errMalformed, nil)
	}
	if paths, ok := c.trees.Get(treeSHA); ok {
		return branchTree{commit, paths}, nil
	}
	paths, err := c.listUprojects(ctx, cl, owner, name, treeSHA)
	if err != nil {
		na := notAccessible(owner + "/" + name)
		return branchTree{}, c.failInstallation("get tree", installationID, err, statusErrors{403: na, 404: na})
	}
	c.trees.Add(treeSHA, paths)
	return branchTree{commit, paths}, nil
}

// getBranch is GET /repos/{owner}/{repo}/branches/{branch} through go-github's usual Do, which
// Repositories.GetBranch bypasses (its errors carry neither GitHub's answer nor rate limits).
func getBranch(ctx context.Context, cl *gh.Client, owner, name, branch string) (*gh.Branch, error) {
	req, err := cl.NewRequest(http.MethodGet, "repos/"+owner+"/"+name+"/branches/"+url.PathEscape(branch), nil)
	if err != nil {
		return nil, err
	}
	b := new(gh.Branch)
	if _, err := cl.Do(ctx, req, b); err != nil {
		return nil, err
	}
	return b, nil
}

// listUprojects lists a tree recursively in one call and keeps the .uproject paths up to depth 3,
// sorted. When GitHub truncates the listing (a very large tree), it walks the directories down to
// depth 3 instead, one call per directory.
func (c *Client) listUprojects(ctx context.Context, cl *gh.Client, owner, name, treeSHA string) ([]string, error) {
	t, _, err := cl.Git.GetTree(ctx, owner, name, treeSHA, true)
	if statusOf(err) == 409 { // an empty repository
		return []string{}, nil
	}
	if err != nil {
		return nil, err
	}
	if t.GetTruncated() {
		return c.walkUprojects(ctx, cl, owner, name, treeSHA)
	}
	paths := []string{}
	for _, e := range t.Entries {
		if e.GetType() == "blob" && isUproject(e.GetPath()) {
			paths = append(paths, e.GetPath())
		}
	}
	slices.Sort(paths)
	return paths, nil
}

// walkUprojects lists non-recursive trees level by level, down to the directories at depth 3.
func (c *Client) walkUprojects(ctx context.Context, cl *gh.Client, owner, name, treeSHA string) ([]string, error) {
	type dir struct {
		path, sha string
		depth     int
	}
	var (
		mu    sync.Mutex
		paths = []string{}
		level = []dir{{"", treeSHA, 0}}
	)
	for len(level) > 0 {
		var next []dir
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(concurrency)
		for _, d := range level {
			g.Go(func() error {
				t, _, err := cl.Git.GetTree(gctx, owner, name, d.sha, false)
				if err != nil {
					return err
				}
				mu.Lock()
				defer mu.Unlock()
				for _, e := range t.Entries {
					p := path.Join(d.path, e.GetPath())
					switch {
					case e.GetType() == "blob" && isUproject(p):
						paths = append(paths, p)
					case e.GetType() == "tree" && d.depth < MaxUprojectDepth:
						next = append(next, dir{p, e.GetSHA(), d.depth + 1})
					}
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
		level = next
	}
	slices.Sort(paths)
	return paths, nil
}

// DetectUproject finds and reads the one .uproject of a branch (the default branch when ref is
// ""), at most 3 directories deep. None → uproject_not_found; several → multiple_uprojects with
// the sorted candidate paths.
func (c *Client) DetectUproject(ctx context.Context, installationID int64, fullName, ref string) (*kiln.UprojectInfo, error) {
	owner, name, err := splitFullName(fullName)
	if err != nil {
		return nil, err
	}
	cl, err := c.installation(ctx, installationID)
	if err != nil {
		return nil, err
	}
	empty := kiln.Errorf(kiln.EUprojectNotFound, "%s is empty: no .uproject found", fullName)
	explicit := ref != ""
	if !explicit {
		repo, err := c.getRepo(ctx, cl, installationID, owner, name)
		if err != nil {
			return nil, err
		}
		if ref = repo.DefaultBranch; ref == "" {
			return nil, empty
		}
	}
	tree, err := c.uprojectsAt(ctx, cl, installationID, owner, name, ref)
	if errors.Is(err, errNoBranch) {
		if !explicit { // the default branch of an empty repository does not exist yet
			return nil, empty
		}
		if _, err := c.getRepo(ctx, cl, installationID, owner, name); err != nil {
			return nil, err
		}
		return nil, invalidField("branch", "does not exist in "+fullName)
	}
	if err != nil {
		return nil, err
	}
	switch len(tree.paths) {
	case 0:
		return nil, kiln.Errorf(kiln.EUprojectNotFound, "no .uproject up to %d directories deep in %s on %s", MaxUprojectDepth, fullName, ref)
	case 1:
		return c.readUproject(ctx, cl, installationID, owner, name, tree.commit, tree.paths[0])
	default:
		return nil, &kiln.Error{Code: kiln.EMultipleUprojects, Candidates: tree.paths,
			Message: "several .uproject files in " + fullName + "; choose one with uprojectPath"}
	}
}

// ReadUproject reads and parses the .uproject at path on ref (the default branch when "").
func (c *Client) ReadUproject(ctx context.Context, installationID int64, fullName, ref, p string) (*kiln.UprojectInfo, error) {
	owner, name, err := splitFullName(fullName)
	if err != nil {
		return nil, err
	}
	if !kiln.ValidUprojectPath(p) {
		return nil, invalidField("uprojectPath", "must be a relative path ending in .uproject")
	}
	cl, err := c.installation(ctx, installationID)
	if err != nil {
		return nil, err
	}
	info, err := c.readUproject(ctx, cl, installationID, owner, name, ref, p)
	if kiln.IsCode(err, kiln.EUprojectNotFound) {
		// GitHub answers 404 for a repository it hides too.
		if _, rerr := c.getRepo(ctx, cl, installationID, owner, name); rerr != nil {
			return nil, rerr
		}
	}
	return info, err
}

func (c *Client) readUproject(ctx context.Context, cl *gh.Client, installationID int64, owner, name, ref, p string) (*kiln.UprojectInfo, error) {
	notFound := kiln.Errorf(kiln.EUprojectNotFound, "%s not found in %s/%s", p, owner, name)
	file, _, _, err := cl.Repositories.GetContents(ctx, owner, name, p, &gh.RepositoryContentGetOptions{Ref: ref})
	if err != nil {
		return nil, c.failInstallation("get contents", installationID, err, statusErrors{404: notFound})
	}
	if file == nil || file.GetType() != "file" {
		return nil, notFound
	}
	if file.GetSize() > MaxUprojectSize {
		return nil, tooLarge(p)
	}
	data, err := file.GetContent()
	if err != nil {
		return nil, c.fail("get contents", err, nil)
	}
	return ParseUproject(p, []byte(data))
}
