package github

import (
	"context"
	"slices"
	"strings"

	gh "github.com/google/go-github/v62/github"
	"golang.org/x/sync/errgroup"
)

// Branch is a branch of a repository with its head commit.
type Branch struct {
	Name      string
	Commit    BranchCommit
	IsDefault bool
}

// BranchCommit summarises a branch's head commit; Author is the commit author's name.
type BranchCommit struct {
	SHA, Message, Author string
}

// Branches lists the repository's branches whose name contains q (case-insensitively), sorted by
// name (case-insensitively): the limit branches after the one named `after`, and the cursor of the
// next page ("" at the end). Head commits are read for the returned page only, cached by sha.
func (c *Client) Branches(ctx context.Context, installationID int64, fullName, q, after string, limit int) ([]Branch, string, error) {
	owner, name, err := splitFullName(fullName)
	if err != nil {
		return nil, "", err
	}
	cl, err := c.installation(ctx, installationID)
	if err != nil {
		return nil, "", err
	}
	repo, err := c.getRepo(ctx, cl, installationID, owner, name)
	if err != nil {
		return nil, "", err
	}
	q = strings.ToLower(q)
	var all []Branch
	opts := &gh.BranchListOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		list, resp, err := cl.Repositories.ListBranches(ctx, owner, name, opts)
		if err != nil {
			na := notAccessible(fullName)
			return nil, "", c.failInstallation("list branches", installationID, err, statusErrors{403: na, 404: na})
		}
		for _, b := range list {
			if strings.Contains(strings.ToLower(b.GetName()), q) {
				all = append(all, Branch{Name: b.GetName(), Commit: BranchCommit{SHA: b.GetCommit().GetSHA()},
					IsDefault: b.GetName() == repo.DefaultBranch})
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	slices.SortFunc(all, func(a, b Branch) int { return compareNames(a.Name, b.Name) })
	page, next := pageAfter(all, func(b Branch) string { return b.Name }, after, limit)

	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrency)
	for i := range page {
		g.Go(func() error {
			commit, err := c.commit(gctx, cl, installationID, owner, name, page[i].Commit.SHA)
			page[i].Commit = commit
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, "", err
	}
	return page, next, nil
}

// commit reads a commit's message and author name, cached by sha (commits never change).
func (c *Client) commit(ctx context.Context, cl *gh.Client, installationID int64, owner, name, sha string) (BranchCommit, error) {
	if bc, ok := c.commits.Get(sha); ok {
		return bc, nil
	}
	rc, _, err := cl.Repositories.GetCommit(ctx, owner, name, sha, nil)
	if err != nil {
		na := notAccessible(owner + "/" + name)
		return BranchCommit{SHA: sha}, c.failInstallation("get commit", installationID, err, statusErrors{403: na, 404: na})
	}
	bc := BranchCommit{SHA: sha, Message: rc.GetCommit().GetMessage(), Author: rc.GetCommit().GetAuthor().GetName()}
	c.commits.Add(sha, bc)
	return bc, nil
}
