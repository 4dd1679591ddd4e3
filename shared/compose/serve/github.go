package serve

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/kilnbuild/kiln/shared/github"
)

// GitHubApp builds the GitHub App client from the configuration, or returns nil when no App is
// configured (then GitHub features answer github_not_connected).
func (cfg Config) GitHubApp() (*github.Client, error) {
	if cfg.GitHubAppID == "" && cfg.GitHubAppKey == "" {
		return nil, nil
	}
	if cfg.GitHubAppID == "" || cfg.GitHubAppKey == "" {
		return nil, errors.New("KILN_GITHUB_APP_ID and KILN_GITHUB_APP_KEY go together: set both or neither")
	}
	id, err := strconv.ParseInt(cfg.GitHubAppID, 10, 64)
	if err != nil || id <= 0 {
		return nil, errors.New("KILN_GITHUB_APP_ID: must be the App's numeric id")
	}
	key, err := os.ReadFile(cfg.GitHubAppKey)
	if err != nil {
		return nil, fmt.Errorf("KILN_GITHUB_APP_KEY: %w", err)
	}
	if (cfg.GitHubClientID == "") != (cfg.GitHubClientSecret == "") {
		return nil, errors.New("KILN_GITHUB_CLIENT_ID and KILN_GITHUB_CLIENT_SECRET go together: set both or neither")
	}
	client, err := github.New(github.Config{
		APIURL: cfg.GitHubAPIURL, WebURL: cfg.GitHubWebURL, AppID: id, PrivateKeyPEM: key,
		ClientID: cfg.GitHubClientID, ClientSecret: cfg.GitHubClientSecret,
	})
	if err != nil {
		return nil, fmt.Errorf("KILN_GITHUB_APP_KEY: %w", err)
	}
	return client, nil
}
