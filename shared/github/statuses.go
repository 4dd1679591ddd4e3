package github

import (
	"context"
	"time"

	gh "github.com/google/go-github/v62/github"
)

// Commit status states GitHub accepts.
const (
	StatePending = "pending"
	StateSuccess = "success"
	StateFailure = "failure"
	StateError   = "error"
)

// CommitStatus is one status kiln sets on a commit.
type CommitStatus struct {
	State string
	// Context tells kiln's statuses apart on one commit ("kiln/Linux-Shipping").
	Context string
	// Description is cut to GitHub's 140 characters.
	Description string
	// TargetURL is where the status links to ("" for none).
	TargetURL string
}

// maxStatusDescription is GitHub's limit on a status description.
const maxStatusDescription = 140

// permissionsTTL is how long an installation's granted permissions are trusted before they are
// read again (an owner accepting new permissions shows within it).
const permissionsTTL = 10 * time.Minute

// grantedPermissions is what an installation granted the App that kiln reads, and when it was
// read.
type grantedPermissions struct {
	statuses bool // Commit statuses: read and write
	checks   bool // Checks: read and write
	read     time.Time
}

// CanWriteStatuses reports whether the installation granted the App "Commit statuses: read and
// write", read from GitHub as the App and cached for 10 minutes.
func (c *Client) CanWriteStatuses(ctx context.Context, installationID int64) (bool, error) {
	g, err := c.granted(ctx, installationID)
	return g.statuses, err
}

// granted reads the permissions an installation granted, cached for permissionsTTL.
func (c *Client) granted(ctx context.Context, installationID int64) (grantedPermissions, error) {
	now := c.cfg.Now()
	c.mu.Lock()
	g, ok := c.perms[installationID]
	c.mu.Unlock()
	if ok && now.Sub(g.read) < permissionsTTL {
		return g, nil
	}
	in, _, err := c.app.Apps.GetInstallation(ctx, installationID)
	if err != nil {
		return grantedPermissions{}, c.fail("get installation", err, statusErrors{404: invalidInstallation(installationID)})
	}
	perms := in.GetPermissions()
	g = grantedPermissions{statuses: perms.GetStatuses() == "write", checks: perms.GetChecks() == "write", read: now}
	c.mu.Lock()
	c.perms[installationID] = g
	c.mu.Unlock()
	return g, nil
}

// ForgetInstallation drops what is cached of an installation (its token, its permissions): it was
// removed, suspended or changed its permissions.
func (c *Client) ForgetInstallation(installationID int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.tokens, installationID)
	delete(c.perms, installationID)
}

// CreateStatus sets a status on a commit of a repository of the installation.
func (c *Client) CreateStatus(ctx context.Context, installationID int64, fullName, sha string, st CommitStatus) error {
	owner, repo, err := splitFullName(fullName)
	if err != nil {
		return err
	}
	cl, err := c.installation(ctx, installationID)
	if err != nil {
		return err
	}
	desc := []rune(st.Description)
	if len(desc) > maxStatusDescription {
		desc = append(desc[:maxStatusDescription-1], '…')
	}
	s := &gh.RepoStatus{State: gh.String(st.State), Context: gh.String(st.Context), Description: gh.String(string(desc))}
	if st.TargetURL != "" {
		s.TargetURL = gh.String(st.TargetURL)
	}
	if _, _, err := cl.Repositories.CreateStatus(ctx, owner, repo, sha, s); err != nil {
		return c.failInstallation("create commit status", installationID, err, statusErrors{404: notAccessible(fullName)})
	}
	return nil
}
