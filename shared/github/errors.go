package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	gh "github.com/google/go-github/v62/github"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// EGitHubUnavailable is the code of errors where GitHub failed (5xx), limited our rate or could
// not be reached. The HTTP layer answers it with 502.
const EGitHubUnavailable = "github_unavailable"

var errMalformed = errors.New("malformed answer")

// statusErrors chooses the kiln error for GitHub answers with a given status.
type statusErrors map[int]*kiln.Error

func unavailable() *kiln.Error {
	return kiln.Errorf(EGitHubUnavailable, "GitHub did not answer; try again shortly")
}

func invalidInstallation(id int64) *kiln.Error {
	return kiln.Errorf(kiln.EGitHubInstallationInvalid, "GitHub does not know installation %d of this App", id)
}

func notAccessible(fullName string) *kiln.Error {
	return kiln.Errorf(kiln.ERepoNotAccessible, "the GitHub App has no access to %s", fullName)
}

func invalidField(field, problem string) *kiln.Error {
	return kiln.FieldError(kiln.EValidation, "some fields are missing or invalid", field, problem)
}

// fail turns a failed GitHub call into a kiln error: GitHub's 5xx, rate limits (403 or 429 with
// rate-limit headers), network failures and garbled answers become EGitHubUnavailable (wrapped
// with the cause, for logs); other statuses take their error from byStatus, or stay internal.
// Messages never hold tokens: go-github's errors name the method and URL only.
func (c *Client) fail(op string, err error, byStatus statusErrors) error {
	var ke *kiln.Error
	if errors.As(err, &ke) {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("github: %s: %w", op, err)
	}
	var rl *gh.RateLimitError
	var arl *gh.AbuseRateLimitError
	var er *gh.ErrorResponse
	switch {
	case errors.As(err, &rl), errors.As(err, &arl):
	case errors.As(err, &er) && er.Response != nil:
		status := er.Response.StatusCode
		if status < 500 && status != http.StatusTooManyRequests && !rateLimited(er.Response) {
			if e := byStatus[status]; e != nil {
				return e
			}
			return fmt.Errorf("github: %s: %w", op, err)
		}
	}
	return fmt.Errorf("%w (github: %s: %v)", unavailable(), op, err)
}

// failInstallation is fail for calls made with an installation token: a 401 means GitHub no
// longer accepts the token, so it is dropped and the installation reported invalid.
func (c *Client) failInstallation(op string, id int64, err error, byStatus statusErrors) error {
	if statusOf(err) == http.StatusUnauthorized {
		c.forgetToken(id)
		return invalidInstallation(id)
	}
	return c.fail(op, err, byStatus)
}

// rateLimited reports a 403 that is GitHub limiting the rate rather than refusing access.
func rateLimited(r *http.Response) bool {
	return r.StatusCode == http.StatusForbidden &&
		(r.Header.Get("X-RateLimit-Remaining") == "0" || r.Header.Get("Retry-After") != "")
}

// statusOf returns the HTTP status of a GitHub error answer, or 0.
func statusOf(err error) int {
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	return 0
}
