package awsapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/kilnbuild/kiln/shared/github"
	"github.com/kilnbuild/kiln/shared/httpapi"
	"github.com/kilnbuild/kiln/shared/settings"
)

// GitHubConfig is the GitHub App of the AWS deployment: KILN_GITHUB_APP_ID, KILN_GITHUB_APP_SLUG,
// KILN_GITHUB_SECRET_ARN (a Secrets Manager secret holding {"privateKey","webhookSecret"}) and
// KILN_GITHUB_API_URL (GitHub Enterprise, tests; default api.github.com). All unset: no App,
// GitHub features answer github_not_connected as in kiln serve. KILN_SIGNUP=github adds GitHub
// sign-in, which needs the App's OAuth client: KILN_GITHUB_CLIENT_ID and the secret's
// "clientSecret", on the web at KILN_GITHUB_WEB_URL (default github.com).
type GitHubConfig struct {
	AppID     int64
	Slug      string
	SecretARN string
	APIURL    string
	ClientID  string
	WebURL    string
	SignUp    bool
}

func loadGitHubConfig(getenv func(string) string) (GitHubConfig, error) {
	c := GitHubConfig{Slug: settings.GitHubAppSlug.Get(getenv), SecretARN: settings.GitHubSecretARN.Get(getenv)}
	var err error
	if c.APIURL, err = settings.GitHubAPIURL.Read(getenv); err != nil {
		return c, err
	}
	if (getenv(settings.GitHubAppID.Name) == "") != (c.SecretARN == "") {
		return c, errors.New("KILN_GITHUB_APP_ID and KILN_GITHUB_SECRET_ARN go together: set both or neither")
	}
	if c.AppID, err = settings.GitHubAppID.Read(getenv); err != nil {
		return c, err
	}
	if c.ClientID, err = settings.GitHubClientID.Read(getenv); err != nil {
		return c, err
	}
	if c.WebURL, err = settings.GitHubWebURL.Read(getenv); err != nil {
		return c, err
	}
	if c.SignUp, err = settings.SignUp.Read(getenv); err != nil {
		return c, err
	}
	if c.SignUp && (c.AppID == 0 || c.ClientID == "") {
		return c, errors.New("KILN_SIGNUP: github needs the GitHub App and its OAuth client (KILN_GITHUB_APP_ID, KILN_GITHUB_SECRET_ARN, KILN_GITHUB_CLIENT_ID)")
	}
	return c, nil
}

// GitHubApp is the GitHub App client with the secret its webhook deliveries are signed with.
type GitHubApp struct {
	Client        *github.Client
	WebhookSecret string
	// SignIn is true when people sign in with GitHub through the App's OAuth client
	// (KILN_SIGNUP=github).
	SignIn bool
}

// githubSecret is the JSON of the App's Secrets Manager secret.
type githubSecret struct {
	PrivateKey    string `json:"privateKey"`
	WebhookSecret string `json:"webhookSecret"`
	// ClientSecret is the App's OAuth client secret, needed by GitHub sign-in.
	ClientSecret string `json:"clientSecret"`
}

// NewGitHubApp makes the App from its configuration and its secret's JSON; nil when no App is
// configured.
func NewGitHubApp(cfg GitHubConfig, secretJSON string) (*GitHubApp, error) {
	if cfg.AppID == 0 {
		return nil, nil
	}
	var sec githubSecret
	if err := json.Unmarshal([]byte(secretJSON), &sec); err != nil || sec.PrivateKey == "" {
		return nil, errors.New(`KILN_GITHUB_SECRET_ARN: the secret must be JSON {"privateKey": "<PEM>", "webhookSecret": "..."}`)
	}
	if cfg.SignUp && sec.ClientSecret == "" {
		return nil, errors.New(`KILN_GITHUB_SECRET_ARN: GitHub sign-in (KILN_SIGNUP=github) needs the App's OAuth client secret as "clientSecret" in the secret`)
	}
	client, err := github.New(github.Config{APIURL: cfg.APIURL, WebURL: cfg.WebURL, AppID: cfg.AppID, Slug: cfg.Slug, PrivateKeyPEM: []byte(sec.PrivateKey),
		ClientID: cfg.ClientID, ClientSecret: sec.ClientSecret})
	if err != nil {
		return nil, fmt.Errorf("KILN_GITHUB_SECRET_ARN: %w", err)
	}
	return &GitHubApp{Client: client, WebhookSecret: sec.WebhookSecret, SignIn: cfg.SignUp}, nil
}

// readGitHubApp reads the App's secret from Secrets Manager; nil when no App is configured.
func readGitHubApp(ctx context.Context, sm *secretsmanager.Client, cfg GitHubConfig) (*GitHubApp, error) {
	if cfg.AppID == 0 {
		return nil, nil
	}
	out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(cfg.SecretARN)})
	if err != nil {
		return nil, fmt.Errorf("read the GitHub App secret: %w", err)
	}
	return NewGitHubApp(cfg, aws.ToString(out.SecretString))
}

// withGitHub gives the API the App, when there is one: linking installations, push webhooks
// and the installation tokens of build hosts then work as in kiln serve.
func withGitHub(c httpapi.Config, gh *GitHubApp) httpapi.Config {
	if gh != nil {
		c.GitHub, c.GitHubWebhookSecret = gh.Client, gh.WebhookSecret
		// With the App's OAuth client, installations are linked through the verified install flow.
		c.GitHubOAuth = gh.Client.HasOAuthClient()
		if gh.SignIn {
			c.SignIn = gh.Client
		}
	}
	return c
}
