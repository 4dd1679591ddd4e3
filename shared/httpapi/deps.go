package httpapi

import (
	"context"

	"github.com/kilnbuild/kiln/shared/github"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// Engines tells which Unreal Engine versions a build host provides.
type Engines interface {
	Provides(ctx context.Context, version string) (bool, error)
}

// GitHubApp is what the API asks of the GitHub App: installations, repositories, branches and
// .uproject detection on behalf of an installation, and the install flow.
type GitHubApp interface {
	Installation(ctx context.Context, installationID int64) (*github.Installation, error)
	Repos(ctx context.Context, installationID int64, after string, limit int) ([]github.Repo, string, error)
	Repo(ctx context.Context, installationID int64, fullName string) (*github.Repo, error)
	Branches(ctx context.Context, installationID int64, fullName, q, after string, limit int) ([]github.Branch, string, error)
	DetectUproject(ctx context.Context, installationID int64, fullName, ref string) (*kiln.UprojectInfo, error)
	ReadUproject(ctx context.Context, installationID int64, fullName, ref, path string) (*kiln.UprojectInfo, error)
	InstallURL(ctx context.Context, state string) (string, error)
	ExchangeCode(ctx context.Context, code string) (string, error)
	UserInstallationIDs(ctx context.Context, userToken string) ([]int64, error)
	AccountOf(ctx context.Context, userToken string) (*github.Account, error)
}

// GitHubSignIn is the GitHub App's OAuth client as the sign-in flow uses it: where to send the
// browser, the code GitHub sends back traded for the user's token, and who that user is.
type GitHubSignIn interface {
	SignInURL(state, redirectURI string) (string, error)
	ExchangeCode(ctx context.Context, code string) (string, error)
	SignedInUser(ctx context.Context, userToken string) (*github.SignedInUser, error)
}
