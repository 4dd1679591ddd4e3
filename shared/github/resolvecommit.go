package github

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// fullSHA is a whole commit sha as GitHub answers it.
var fullSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

// ResolveCommit turns an abbreviated commit sha (4 to 40 hex digits) of the repository into the
// full sha, through GitHub's commit API. A prefix that names no commit, or several (GitHub
// answers 422 to both, and 404 to one too short to look up), is validation_failed on commit.
func (c *Client) ResolveCommit(ctx context.Context, installationID int64, fullName, prefix string) (string, error) {
	owner, name, err := splitFullName(fullName)
	if err != nil {
		return "", err
	}
	prefix = strings.ToLower(prefix)
	cl, err := c.installation(ctx, installationID)
	if err != nil {
		return "", err
	}
	rc, _, err := cl.Repositories.GetCommit(ctx, owner, name, prefix, nil)
	if err != nil {
		unknown := invalidField("commit", "no single commit of "+fullName+" starts with "+prefix+
			" (none does, or several do): give more of its sha")
		return "", c.failInstallation("resolve commit", installationID, err,
			statusErrors{404: unknown, 409: unknown, 422: unknown, 403: notAccessible(fullName)})
	}
	sha := rc.GetSHA()
	if !fullSHA.MatchString(sha) || !strings.HasPrefix(sha, prefix) {
		return "", c.fail("resolve commit", errMalformed, nil)
	}
	return sha, nil
}

// ProjectCommit is ResolveCommit for a GitHub project: its installation and repository.
func (c *Client) ProjectCommit(ctx context.Context, p *kiln.Project, prefix string) (string, error) {
	inst, err := strconv.ParseInt(p.InstallationID, 10, 64)
	if err != nil {
		return "", fmt.Errorf("github: resolve commit: project %s has no installation: %w", p.ID, err)
	}
	return c.ResolveCommit(ctx, inst, p.RepoLink, prefix)
}
