package github

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	gh "github.com/google/go-github/v62/github"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// SignedInUser is the GitHub account behind a user access token.
type SignedInUser struct {
	ID    int64
	Login string
	// Name is the account's display name, or its login when it has none.
	Name string
	// Email is the account's primary email address, verified by GitHub.
	Email string
}

// SignInURL is GitHub's authorize page for the App's OAuth client (the web application flow of
// "Sign in with GitHub"): GitHub sends the user back to redirectURI with code and state, and
// ExchangeCode turns the code into a user access token for SignedInUser.
func (c *Client) SignInURL(state, redirectURI string) (string, error) {
	if err := c.oauthConfigured(); err != nil {
		return "", err
	}
	if u, err := url.Parse(redirectURI); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("github: the sign-in redirect URI %q is not an absolute http(s) URL", redirectURI)
	}
	u := c.webURL.JoinPath("login", "oauth", "authorize")
	u.RawQuery = url.Values{"client_id": {c.cfg.ClientID}, "redirect_uri": {redirectURI}, "state": {state}}.Encode()
	return u.String(), nil
}

// SignedInUser reads who a user access token (from ExchangeCode) belongs to: AccountOf, then
// GET /user/emails for the primary, verified email address. Listing emails needs the App's
// "Email addresses" account permission (read-only); without it GitHub answers 403 and this
// fails with an internal error naming the permission. A token GitHub refuses → validation_failed
// on "code"; an account without a verified primary email → validation_failed on "email".
func (c *Client) SignedInUser(ctx context.Context, userToken string) (*SignedInUser, error) {
	a, err := c.AccountOf(ctx, userToken)
	if err != nil {
		return nil, err
	}
	email, err := c.primaryEmail(ctx, c.base.WithAuthToken(userToken), statusErrors{401: refusedAuthorization()})
	if err != nil {
		return nil, err
	}
	return &SignedInUser{ID: a.ID, Login: a.Login, Name: a.Name, Email: email}, nil
}

// primaryEmail returns the user's primary email address if GitHub has verified it.
func (c *Client) primaryEmail(ctx context.Context, cl *gh.Client, refused statusErrors) (string, error) {
	opts := &gh.ListOptions{PerPage: 100}
	for {
		list, resp, err := cl.Users.ListEmails(ctx, opts)
		if err != nil {
			err = c.fail("list the user's email addresses", err, refused)
			if kiln.ErrorCode(err) == kiln.EInternal && statusOf(err) == 403 {
				err = fmt.Errorf("%w (the GitHub App needs the \"Email addresses\" account permission, read-only)", err)
			}
			return "", err
		}
		for _, e := range list {
			if e.GetPrimary() {
				if !e.GetVerified() || e.GetEmail() == "" {
					return "", noVerifiedEmail()
				}
				return e.GetEmail(), nil
			}
		}
		if resp.NextPage == 0 {
			return "", noVerifiedEmail()
		}
		opts.Page = resp.NextPage
	}
}

func noVerifiedEmail() *kiln.Error {
	return kiln.FieldError(kiln.EValidation,
		"your GitHub account has no verified primary email address; verify one on GitHub and sign in again",
		"email", "GitHub has no verified primary email address for this account")
}

// HasOAuthClient reports whether the App's OAuth client is configured: the install flow and
// sign-in need it.
func (c *Client) HasOAuthClient() bool { return c.oauthConfigured() == nil }

// oauthConfigured is nil when the App's OAuth client (id and secret) is set, else the error
// sign-in and the install flow answer.
func (c *Client) oauthConfigured() error {
	if c.cfg.ClientID == "" || c.cfg.ClientSecret == "" {
		return errors.New("github: the App's OAuth client is not configured")
	}
	return nil
}
