package github

import (
	"context"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Reasons a build of a GitHub project cannot check out, as Diagnose words them.
const (
	ReasonUninstalled = "GitHub App was uninstalled: install it again and link the installation, then trigger a new build"
	ReasonSuspended   = "GitHub App installation is suspended: unsuspend it on GitHub, then trigger a new build"
)

// ReasonRepoRemoved is why a build of a repository the installation lost cannot check out.
func ReasonRepoRemoved(fullName string) string {
	return "the repository " + fullName + " was removed from the GitHub App installation: add it again on GitHub, then trigger a new build"
}

// Diagnose explains why reaching a repository of an installation failed with err, asking GitHub
// afresh: an installation GitHub no longer knows (uninstalled), a suspended one, or a repository
// it no longer holds each come back as a kiln error whose message says so; otherwise err.
func (c *Client) Diagnose(ctx context.Context, installationID int64, fullName string, err error) error {
	c.ForgetInstallation(installationID)
	in, ierr := c.Installation(ctx, installationID)
	switch {
	case kiln.IsCode(ierr, kiln.EGitHubInstallationInvalid):
		return kiln.Errorf(kiln.EGitHubInstallationInvalid, "%s", ReasonUninstalled)
	case ierr != nil:
		return err
	case in.Suspended:
		return kiln.Errorf(kiln.EGitHubInstallationInvalid, "%s", ReasonSuspended)
	}
	if _, rerr := c.Repo(ctx, installationID, fullName); kiln.IsCode(rerr, kiln.ERepoNotAccessible) {
		return kiln.Errorf(kiln.ERepoNotAccessible, "%s", ReasonRepoRemoved(fullName))
	}
	return err
}
