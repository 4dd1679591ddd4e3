package github

import (
	"context"
	"errors"
	"slices"

	gh "github.com/google/go-github/v62/github"
	"golang.org/x/sync/errgroup"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// concurrency bounds the GitHub calls one request makes at once.
const concurrency = 8

// Repo is a repository an installation can read.
type Repo struct {
	ID            int64
	FullName      string
	Private       bool
	DefaultBranch string
	CloneURL      string
	// UprojectDetected: a .uproject sits at most 3 directories deep on the default branch. Only
	// Repos fills it.
	UprojectDetected bool
}

func repoFrom(r *gh.Repository) Repo {
	return Repo{ID: r.GetID(), FullName: r.GetFullName(), Private: r.GetPrivate(),
		DefaultBranch: r.GetDefaultBranch(), CloneURL: r.GetCloneURL()}
}

// Repos lists the installation's repositories sorted by full name (case-insensitively): the limit
// repositories after the one named `after`, and the cursor of the next page ("" at the end).
// UprojectDetected is computed for the returned page only, from one tree listing per default-branch
// tree, cached by tree sha.
func (c *Client) Repos(ctx context.Context, installationID int64, after string, limit int) ([]Repo, string, error) {
	cl, err := c.installation(ctx, installationID)
	if err != nil {
		return nil, "", err
	}
	var all []Repo
	opts := &gh.ListOptions{PerPage: 100}
	for {
		list, resp, err := cl.Apps.ListRepos(ctx, opts)
		if err != nil {
			return nil, "", c.failInstallation("list installation repositories", installationID, err, nil)
		}
		for _, r := range list.Repositories {
			all = append(all, repoFrom(r))
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	slices.SortFunc(all, func(a, b Repo) int { return compareNames(a.FullName, b.FullName) })
	page, next := pageAfter(all, func(r Repo) string { return r.FullName }, after, limit)

	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrency)
	for i := range page {
		g.Go(func() error {
			found, err := c.hasUproject(gctx, cl, installationID, page[i])
			page[i].UprojectDetected = found
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, "", err
	}
	return page, next, nil
}

// hasUproject reports whether the repository's default branch has a .uproject up to depth 3. An
// empty repository, or one gone since it was listed, has none.
func (c *Client) hasUproject(ctx context.Context, cl *gh.Client, installationID int64, r Repo) (bool, error) {
	owner, name, err := splitFullName(r.FullName)
	if err != nil || r.DefaultBranch == "" {
		return false, nil
	}
	tree, err := c.uprojectsAt(ctx, cl, installationID, owner, name, r.DefaultBranch)
	if errors.Is(err, errNoBranch) || kiln.IsCode(err, kiln.ERepoNotAccessible) {
		return false, nil
	}
	return len(tree.paths) > 0, err
}

// Repo reads one repository with the installation's token.
func (c *Client) Repo(ctx context.Context, installationID int64, fullName string) (*Repo, error) {
	owner, name, err := splitFullName(fullName)
	if err != nil {
		return nil, err
	}
	cl, err := c.installation(ctx, installationID)
	if err != nil {
		return nil, err
	}
	return c.getRepo(ctx, cl, installationID, owner, name)
}

func (c *Client) getRepo(ctx context.Context, cl *gh.Client, installationID int64, owner, name string) (*Repo, error) {
	r, _, err := cl.Repositories.Get(ctx, owner, name)
	if err != nil {
		na := notAccessible(owner + "/" + name)
		return nil, c.failInstallation("get repository", installationID, err, statusErrors{403: na, 404: na})
	}
	repo := repoFrom(r)
	return &repo, nil
}
