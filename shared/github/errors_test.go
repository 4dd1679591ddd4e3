package github

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/github/githubtest"
	"github.com/kilnbuild/kiln/shared/kiln"
)

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func TestErrorMapping(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(f *fixture)
		call  func(c *Client) error
		code  string
	}{
		{"unknown installation (App call)", nil,
			func(c *Client) error { _, err := c.Installation(context.Background(), 404); return err },
			kiln.EGitHubInstallationInvalid},
		{"unknown installation (token)", nil,
			func(c *Client) error { _, err := c.Repo(context.Background(), 404, "studio/game"); return err },
			kiln.EGitHubInstallationInvalid},
		{"repository of another installation", nil,
			func(c *Client) error { _, err := c.Repo(context.Background(), studio, "elsewhere/secret"); return err },
			kiln.ERepoNotAccessible},
		{"unknown repository", nil,
			func(c *Client) error {
				_, _, err := c.Branches(context.Background(), studio, "studio/nope", "", "", 0)
				return err
			},
			kiln.ERepoNotAccessible},
		{"forbidden repository", func(f *fixture) { f.gh.Fail(githubtest.RouteRepo, 403) },
			func(c *Client) error { _, err := c.Repo(context.Background(), studio, "studio/game"); return err },
			kiln.ERepoNotAccessible},
		{"malformed repository name", nil,
			func(c *Client) error { _, err := c.Repo(context.Background(), studio, "studio/../x"); return err },
			kiln.EValidation},
		{"GitHub 500", func(f *fixture) { f.gh.Fail(githubtest.RouteRepo, 500) },
			func(c *Client) error { _, err := c.Repo(context.Background(), studio, "studio/game"); return err },
			EGitHubUnavailable},
		{"GitHub 502 on a token", func(f *fixture) { f.gh.Fail(githubtest.RouteAccessToken, 502) },
			func(c *Client) error { _, _, err := c.Repos(context.Background(), studio, "", 0); return err },
			EGitHubUnavailable},
		{"primary rate limit", func(f *fixture) { f.gh.FailRateLimited(githubtest.RouteTree) },
			func(c *Client) error { _, _, err := c.Repos(context.Background(), studio, "", 0); return err },
			EGitHubUnavailable},
		{"secondary rate limit", func(f *fixture) { f.gh.Fail(githubtest.RouteBranch, http.StatusTooManyRequests) },
			func(c *Client) error {
				_, err := c.DetectUproject(context.Background(), studio, "studio/game", "main")
				return err
			},
			EGitHubUnavailable},
		{"GitHub 503 on commits", func(f *fixture) { f.gh.Fail(githubtest.RouteCommit, 503) },
			func(c *Client) error {
				_, _, err := c.Branches(context.Background(), studio, "studio/game", "", "", 0)
				return err
			},
			EGitHubUnavailable},
		{"revoked token", func(f *fixture) { f.gh.Fail(githubtest.RouteContents, 401) },
			func(c *Client) error {
				_, err := c.ReadUproject(context.Background(), studio, "studio/game", "", "Game.uproject")
				return err
			},
			kiln.EGitHubInstallationInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.gh.AddRepo(studio, "studio/game", true, "main").Commit("main", "init", "Ada", map[string]string{"Game.uproject": "{}"})
			f.gh.AddRepo(elsewhere, "elsewhere/secret", true, "main")
			if tt.setup != nil {
				tt.setup(f)
			}
			err := tt.call(f.c)
			wantCode(t, err, tt.code)
			if containsAny(err.Error(), "ghs_", "Bearer", "token ") {
				t.Fatalf("error shows a credential: %v", err)
			}
		})
	}
}

func TestNetworkFailureIsUnavailable(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	c, err := New(Config{APIURL: "http://127.0.0.1:1/api/v3/", WebURL: "http://127.0.0.1:1/", AppID: 1, PrivateKeyPEM: srv.PrivateKeyPEM})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Installation(context.Background(), 1)
	wantCode(t, err, EGitHubUnavailable)
	_, err = c.Repo(context.Background(), 1, "studio/game")
	wantCode(t, err, EGitHubUnavailable)
}

func TestNewChecksConfig(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	for name, cfg := range map[string]Config{
		"no app id":   {PrivateKeyPEM: srv.PrivateKeyPEM},
		"bad key":     {AppID: 1, PrivateKeyPEM: []byte("not a key")},
		"bad API URL": {AppID: 1, PrivateKeyPEM: srv.PrivateKeyPEM, APIURL: "api.github.com"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
	c, err := New(Config{AppID: 1, PrivateKeyPEM: srv.PrivateKeyPEM})
	if err != nil || c.base.BaseURL.String() != "https://api.github.com/" {
		t.Fatalf("default API URL: %v %v", c, err)
	}
}
