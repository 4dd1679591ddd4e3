package github

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"

	gh "github.com/google/go-github/v62/github"
)

// Installation is an installation of the App on a GitHub account.
type Installation struct {
	ID int64
	// Account is the login of the organization or user the App is installed on.
	Account     string
	AccountType string
	// RepositorySelection is "all" or "selected".
	RepositorySelection string
	Suspended           bool
}

// Installation reads an installation as the App. An id GitHub does not know for this App →
// github_installation_invalid.
func (c *Client) Installation(ctx context.Context, installationID int64) (*Installation, error) {
	in, _, err := c.app.Apps.GetInstallation(ctx, installationID)
	if err != nil {
		return nil, c.fail("get installation", err, statusErrors{404: invalidInstallation(installationID)})
	}
	return &Installation{
		ID:                  in.GetID(),
		Account:             in.GetAccount().GetLogin(),
		AccountType:         in.GetAccount().GetType(),
		RepositorySelection: in.GetRepositorySelection(),
		Suspended:           in.SuspendedAt != nil,
	}, nil
}

// InstallURL is the App's public install page carrying state, where GitHub sends an installer
// back (with state, code and installation_id) once done.
func (c *Client) InstallURL(ctx context.Context, state string) (string, error) {
	c.mu.Lock()
	slug := c.slug
	c.mu.Unlock()
	if slug == "" {
		app, _, err := c.app.Apps.Get(ctx, "")
		if err != nil {
			return "", c.fail("get app", err, nil)
		}
		if slug = app.GetSlug(); slug == "" {
			return "", c.fail("get app", errMalformed, nil)
		}
		c.mu.Lock()
		c.slug = slug
		c.mu.Unlock()
	}
	u := c.webURL.JoinPath("apps", slug, "installations", "new")
	u.RawQuery = url.Values{"state": {state}}.Encode()
	return u.String(), nil
}

// ExchangeCode trades the code GitHub sent back to the install or sign-in callback for the user's
// access token. A code GitHub refuses (expired, used) → validation_failed on "code".
func (c *Client) ExchangeCode(ctx context.Context, code string) (string, error) {
	if err := c.oauthConfigured(); err != nil {
		return "", err
	}
	form := url.Values{"client_id": {c.cfg.ClientID}, "client_secret": {c.cfg.ClientSecret}, "code": {code}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.webURL.JoinPath("login", "oauth", "access_token").String(),
		strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return "", c.fail("exchange OAuth code", err, nil)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
		return "", c.fail("exchange OAuth code", errors.New(resp.Status), nil)
	}
	var out struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		return "", errors.New("github: exchange OAuth code: unexpected answer " + resp.Status)
	}
	switch {
	case out.Error == "bad_verification_code":
		return "", invalidField("code", "was not accepted by GitHub (expired or already used); sign in or install again")
	case out.Error != "":
		// incorrect_client_credentials and the like: the operator's configuration.
		return "", errors.New("github: exchange OAuth code: GitHub answered " + out.Error)
	case out.AccessToken == "":
		return "", errors.New("github: exchange OAuth code: no token in GitHub's answer")
	}
	return out.AccessToken, nil
}

// UserInstallationIDs lists the installations of this App that the user (by a token from
// ExchangeCode) can access.
func (c *Client) UserInstallationIDs(ctx context.Context, userToken string) ([]int64, error) {
	cl := c.base.WithAuthToken(userToken)
	var ids []int64
	opts := &gh.ListOptions{PerPage: 100}
	for {
		list, resp, err := cl.Apps.ListUserInstallations(ctx, opts)
		if err != nil {
			return nil, c.fail("list user installations", err, statusErrors{401: refusedAuthorization()})
		}
		for _, in := range list {
			ids = append(ids, in.GetID())
		}
		if resp.NextPage == 0 {
			return ids, nil
		}
		opts.Page = resp.NextPage
	}
}
