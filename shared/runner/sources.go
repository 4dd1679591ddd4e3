package runner

import (
	"context"
	"errors"
	"strconv"

	"github.com/kilnbuild/kiln/shared/buildsteps"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// OrganizationReader reads the organization a build belongs to (its integrations).
type OrganizationReader interface {
	GetOrganization(ctx context.Context, id string) (*kiln.Organization, error)
}

// LocalSources are the runner's Sources in the service's own process: the GitHub App and the
// organizations' saved Perforce credentials.
type LocalSources struct {
	Store  OrganizationReader
	GitHub GitHubSource      // nil when no GitHub App is configured
	P4     PerforceConnector // nil when this host has no p4
}

var _ Sources = LocalSources{}

// Git finds the clone URL and token source of a GitHub project. An unlinked installation
// fails the build with a reason that says what to do.
func (r LocalSources) Git(ctx context.Context, b *kiln.Build, p *kiln.Project) (*buildsteps.GitSource, error) {
	org, err := r.Store.GetOrganization(ctx, b.OrganizationID)
	if err != nil {
		return nil, err
	}
	if r.GitHub == nil || org.Integrations.GitHubInstallationID == "" || org.Integrations.GitHubInstallationID != p.InstallationID {
		return nil, fail("GitHub App was uninstalled or unlinked: GitHub is not connected to the organization; link the GitHub App installation again, then trigger a new build")
	}
	inst, err := strconv.ParseInt(p.InstallationID, 10, 64)
	if err != nil {
		return nil, fail("the project's GitHub installation id is not valid")
	}
	cloneURL, err := r.GitHub.CloneURL(ctx, inst, p.RepoLink)
	if err != nil {
		if code := kiln.ErrorCode(err); code == kiln.EGitHubInstallationInvalid || code == kiln.ERepoNotAccessible {
			var ke *kiln.Error
			errors.As(err, &ke)
			return nil, fail("%s", ke.Message)
		} else if code != kiln.EInternal {
			return nil, fail("cannot reach the repository %s on GitHub (%s)", p.RepoLink, code)
		}
		return nil, err
	}
	return &buildsteps.GitSource{
		CloneURL: cloneURL, Branch: b.Branch, Commit: b.Commit,
		Token: func(ctx context.Context) (string, error) { return r.GitHub.InstallationToken(ctx, inst) },
	}, nil
}

// Perforce opens the organization's Perforce server for a build of a stream project. The
// client workspace is named after the project and stream, like the workspace directory, so each
// build of them syncs only what changed since the last.
func (r LocalSources) Perforce(ctx context.Context, b *kiln.Build, p *kiln.Project) (*buildsteps.PerforceSource, error) {
	if r.P4 == nil {
		return nil, fail("Perforce is not available on this build host")
	}
	org, err := r.Store.GetOrganization(ctx, b.OrganizationID)
	if err != nil {
		return nil, err
	}
	c, err := r.P4.Connect(ctx, org)
	var ke *kiln.Error
	switch {
	case kiln.IsCode(err, kiln.EPerforceNotConfigured):
		return nil, fail("Perforce is not configured for the organization: save its credentials (PATCH /organizations/%s/perforce), then trigger a new build", org.ID)
	case errors.As(err, &ke):
		return nil, fail("sync failed: %s", ke.Message)
	case err != nil:
		return nil, err
	}
	return &buildsteps.PerforceSource{
		Client: c, WorkspaceName: "kiln-" + p.ID + "-" + WorkspaceKey(b.Branch), Stream: b.Branch, Changelist: b.Changelist,
		Classic: p.DepotPath != "",
	}, nil
}
