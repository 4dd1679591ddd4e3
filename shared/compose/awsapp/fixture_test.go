package awsapp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/github/githubtest"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
)

// testGitHubApp is the App of a fake GitHub, made as the Lambdas make it from their secret (whose
// webhookSecret is webhookSecret).
func testGitHubApp(t *testing.T, gh *githubtest.Server, webhookSecret string) *GitHubApp {
	t.Helper()
	secret, _ := json.Marshal(map[string]string{"privateKey": string(gh.PrivateKeyPEM), "webhookSecret": webhookSecret})
	app, err := NewGitHubApp(GitHubConfig{AppID: gh.AppID, APIURL: gh.URL(), SecretARN: "arn:gh"}, string(secret))
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// testStoreAndLogs is a SQLite store and file build logs in the test's temporary folder, closed
// when the test ends.
func testStoreAndLogs(t *testing.T) (*sqlitestore.Store, *buildlog.Files) {
	t.Helper()
	st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "kiln.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	logs, err := buildlog.NewFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return st, logs
}
