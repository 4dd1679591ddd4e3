package awsapp

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/github/githubtest"
	"github.com/kilnbuild/kiln/shared/hostcred"
	"github.com/kilnbuild/kiln/shared/httpapi"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/storefixture"
)

func TestGitHubSettings(t *testing.T) {
	base := map[string]string{"KILN_DYNAMODB_TABLE": "kiln", "KILN_MASTER_KEY_SECRET_ARN": "arn:k"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want int64
		ok   bool
	}{
		{"none", nil, 0, true},
		{"both", map[string]string{"KILN_GITHUB_APP_ID": "12", "KILN_GITHUB_SECRET_ARN": "arn:gh"}, 12, true},
		{"id only", map[string]string{"KILN_GITHUB_APP_ID": "12"}, 0, false},
		{"secret only", map[string]string{"KILN_GITHUB_SECRET_ARN": "arn:gh"}, 0, false},
		{"not a number", map[string]string{"KILN_GITHUB_APP_ID": "kiln", "KILN_GITHUB_SECRET_ARN": "arn:gh"}, 0, false},
		{"sign-up with the OAuth client", map[string]string{"KILN_GITHUB_APP_ID": "12", "KILN_GITHUB_SECRET_ARN": "arn:gh",
			"KILN_SIGNUP": "github", "KILN_GITHUB_CLIENT_ID": "Iv1.kiln"}, 12, true},
		{"sign-up without the OAuth client", map[string]string{"KILN_GITHUB_APP_ID": "12", "KILN_GITHUB_SECRET_ARN": "arn:gh",
			"KILN_SIGNUP": "github"}, 12, false},
		{"sign-up without the App", map[string]string{"KILN_SIGNUP": "github", "KILN_GITHUB_CLIENT_ID": "Iv1.kiln"}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadAWSConfig(func(k string) string { return tc.env[k] + base[k] })
			if tc.ok != (err == nil) || c.GitHub.AppID != tc.want {
				t.Fatalf("app id %d, err %v; want %d, ok %v", c.GitHub.AppID, err, tc.want, tc.ok)
			}
		})
	}
	if _, err := NewGitHubApp(GitHubConfig{AppID: 1}, `{"webhookSecret":"x"}`); err == nil || strings.Contains(err.Error(), "x") {
		t.Errorf("a secret without a private key: %v", err)
	}
	// Sign-up needs the OAuth client's secret in the App's secret; with it, the App signs people in.
	gh := githubtest.New(t)
	signUp := GitHubConfig{AppID: gh.AppID, APIURL: gh.URL(), SecretARN: "arn:gh", ClientID: gh.ClientID, SignUp: true}
	secret := func(clientSecret string) string {
		b, _ := json.Marshal(map[string]string{"privateKey": string(gh.PrivateKeyPEM), "webhookSecret": "w", "clientSecret": clientSecret})
		return string(b)
	}
	if _, err := NewGitHubApp(signUp, secret("")); err == nil || !strings.Contains(err.Error(), "clientSecret") {
		t.Errorf("sign-up without the client secret: %v", err)
	}
	app, err := NewGitHubApp(signUp, secret(gh.ClientSecret))
	if err != nil || !app.SignIn || !app.Client.HasOAuthClient() {
		t.Fatalf("sign-up: %+v %v", app, err)
	}
	if cfg := withGitHub(httpapi.Config{}, app); cfg.SignIn == nil || !cfg.GitHubOAuth {
		t.Errorf("the API is not given sign-in and the install flow: %+v", cfg)
	}
}

// TestHostAPIBesideTheAPI: the AWS API serves the host API under /host/v1/ with the GitHub App
// of its secret: a claimed build's host gets its job with a token minted for it, while the API
// and GitHub's push webhooks (signed with the secret's webhookSecret) work as before.
func TestHostAPIBesideTheAPI(t *testing.T) {
	ctx := context.Background()
	gh := githubtest.New(t)
	gh.AddInstallation(42, "studio")
	gh.AddRepo(42, "studio/shooter", true, "main").Commit("main", "Game", "Ada", map[string]string{"G/G.uproject": "{}"})
	app := testGitHubApp(t, gh, "hook-secret")
	st, logs := testStoreAndLogs(t)
	keys, err := keyring.New(make([]byte, keyring.MasterKeySize))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	created, token := storefixture.GitHubOrg(t, st, "42", now)
	org := created.ID
	p := &kiln.Project{ID: kiln.NewID(), OrganizationID: org, Name: "G", SourceControl: kiln.SourceGitHub, RepoLink: "studio/shooter",
		InstallationID: "42", DefaultBranch: "main", CreatedAt: now, UpdatedAt: now}
	s := &kiln.BuildSetting{ID: kiln.NewID(), OrganizationID: org, ProjectID: p.ID, Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping,
		Branch: "main", UEVersion: "5.3", Trigger: kiln.TriggerManual, CreatedAt: now, UpdatedAt: now}
	b := &kiln.Build{ID: kiln.NewID(), OrganizationID: org, ProjectID: p.ID, BuildSettingID: s.ID, Status: kiln.StatusPending,
		Platform: s.Platform, BuildType: s.BuildType, Branch: "main", UEVersion: "5.3", TriggeredBy: "manual", CreatedAt: now}
	for _, err := range []error{st.CreateProject(ctx, p, 0), st.CreateBuildSetting(ctx, s), st.CreateBuild(ctx, b)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	cred, hash, err := hostcred.New(org, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&builds.Lifecycle{Builds: st, Projects: st, Artifacts: st}).ClaimHost(ctx, org, b.ID, "codebuild", hash, time.Minute); err != nil {
		t.Fatal(err)
	}
	api, err := NewAPIFromParts(AWSConfig{}, Parts{Store: st, Logs: logs, Artifacts: noArtifacts{}, Keys: keys, GitHub: app,
		Workflow: awsWorkflow{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path, auth, body string, header ...string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		return rec
	}

	rec := do("POST", "/host/v1/start", "Bearer "+cred, `{"hostRunId":"kiln-hosts:1"}`)
	var job agentapi.Job
	if err := json.Unmarshal(rec.Body.Bytes(), &job); rec.Code != http.StatusOK || err != nil || job.Git == nil ||
		!strings.HasPrefix(job.Git.Token, "ghs_") || job.Git.CloneURL == "" || job.Build.ID != b.ID {
		t.Fatalf("start: %d %s", rec.Code, rec.Body)
	}
	if rec := do("POST", "/host/v1/artifact/uploads", "Bearer "+cred, `{}`); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("upload without S3: %d %s", rec.Code, rec.Body)
	}
	// The API's own token is no host credential, and a host credential opens no API route.
	if rec := do("POST", "/host/v1/heartbeat", "Bearer "+token, `{}`); rec.Code != http.StatusUnauthorized {
		t.Errorf("heartbeat with an API token: %d", rec.Code)
	}
	if rec := do("GET", "/auth/me", "Bearer "+cred, ""); rec.Code != http.StatusUnauthorized {
		t.Errorf("GET /auth/me with a host credential: %d", rec.Code)
	}
	if rec := do("GET", "/auth/me", "Bearer "+token, ""); rec.Code != http.StatusOK {
		t.Errorf("GET /auth/me: %d %s", rec.Code, rec.Body)
	}
	// Push webhooks are verified with the secret's webhookSecret.
	body := `{"zen":"hi","hook_id":1}`
	m := hmac.New(sha256.New, []byte("hook-secret"))
	m.Write([]byte(body))
	sig := "sha256=" + hex.EncodeToString(m.Sum(nil))
	if rec := do("POST", "/webhooks/github", "", body, "X-GitHub-Event", "ping", "X-GitHub-Delivery", "d1", "X-Hub-Signature-256", sig,
		"Content-Type", "application/json"); rec.Code != http.StatusOK {
		t.Errorf("signed ping: %d %s", rec.Code, rec.Body)
	}
	if rec := do("POST", "/webhooks/github", "", body, "X-GitHub-Event", "ping", "X-GitHub-Delivery", "d2", "X-Hub-Signature-256", "sha256="+strconv.Itoa(0),
		"Content-Type", "application/json"); rec.Code == http.StatusOK {
		t.Errorf("badly signed ping accepted")
	}
}
