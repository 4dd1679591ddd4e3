package httpapi

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

type githubLinkPatch struct {
	InstallationID *string `json:"installationId"`
}

type integrationsPatch struct {
	GitHub Optional[githubLinkPatch] `json:"github"`
}

// githubLinkRequest is what a PATCH of integrationSettings asks: nothing, unlink, or link id.
type githubLinkRequest struct {
	set            bool
	unlink         bool
	installationID string
}

// checkGitHubLink validates integrationSettings of a PATCH and, for a link by id, asks GitHub
// whether the installation exists. Linking by a bare id is allowed only when the server has no
// OAuth client configured (a studio's own kiln); otherwise the verified install flow is the way.
func (s *Server) checkGitHubLink(ctx context.Context, patch Optional[integrationsPatch], errs kiln.FieldErrors) (githubLinkRequest, error) {
	var req githubLinkRequest
	if !patch.Set {
		return req, nil
	}
	if patch.Null {
		errs.Add("integrationSettings", "must be an object such as {\"github\": {\"installationId\": \"123\"}}")
		return req, nil
	}
	gh := patch.Value.GitHub
	if !gh.Set {
		return req, nil
	}
	req.set = true
	if gh.Null {
		req.unlink = true
		return req, nil
	}
	switch {
	case s.github == nil:
		errs.Add("integrationSettings", "this server has no GitHub App configured (KILN_GITHUB_APP_ID, KILN_GITHUB_APP_KEY)")
		return req, nil
	case s.githubOAuth:
		errs.Add("integrationSettings", "link the installation through GitHub's install flow: GET /integrations/github/install")
		return req, nil
	}
	id := strings.TrimSpace(deref(gh.Value.InstallationID))
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		errs.Add("integrationSettings.github.installationId", "is required and must be a GitHub installation id (digits)")
		return req, nil
	}
	if len(errs) > 0 {
		return req, nil // no GitHub call for a request that fails anyway
	}
	if _, err := s.github.Installation(ctx, n); err != nil {
		return req, err
	}
	req.installationID = strconv.FormatInt(n, 10)
	return req, nil
}

// applyGitHubLink links or unlinks as asked.
func (s *Server) applyGitHubLink(ctx context.Context, orgID string, req githubLinkRequest, at time.Time) (*kiln.Organization, error) {
	if req.unlink {
		return s.orgs.UnlinkGitHubInstallation(ctx, orgID, at)
	}
	return s.orgs.LinkGitHubInstallation(ctx, orgID, req.installationID, at)
}
