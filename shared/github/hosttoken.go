package github

import (
	"context"
	"time"

	gh "github.com/google/go-github/v62/github"
)

// HostToken mints a new installation token for a remote build host that clones one repository:
// limited to that repository and to reading its contents, never cached nor shared with the
// service's own calls, and valid until expires (GitHub gives an hour). Never log it.
func (c *Client) HostToken(ctx context.Context, installationID int64, fullName string) (token string, expires time.Time, err error) {
	_, repo, err := splitFullName(fullName)
	if err != nil {
		return "", time.Time{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, tokenTimeout)
	defer cancel()
	t, _, err := c.app.Apps.CreateInstallationToken(ctx, installationID, &gh.InstallationTokenOptions{
		Repositories: []string{repo},
		Permissions:  &gh.InstallationPermissions{Contents: gh.String("read")},
	})
	if err != nil {
		inv := invalidInstallation(installationID)
		na := notAccessible(fullName)
		return "", time.Time{}, c.fail("create a build host's installation token", err, statusErrors{401: inv, 403: inv, 404: inv, 422: na})
	}
	if t.GetToken() == "" || t.ExpiresAt == nil {
		return "", time.Time{}, c.fail("create a build host's installation token", errMalformed, nil)
	}
	return t.GetToken(), t.GetExpiresAt().Time, nil
}
