package hostclient_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/agentapi/hostclient"
	"github.com/kilnbuild/kiln/shared/artifacts/s3artifacts"
	"github.com/kilnbuild/kiln/shared/awslocal/minio/miniotest"
	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/buildsteps"
	"github.com/kilnbuild/kiln/shared/engines"
	"github.com/kilnbuild/kiln/shared/github"
	"github.com/kilnbuild/kiln/shared/github/githubtest"
	"github.com/kilnbuild/kiln/shared/hostcred"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
	"github.com/kilnbuild/kiln/shared/storefixture"
)

// minio is the S3 every test of this package stores artifacts in; TestMain starts it.
var minio *miniotest.Server

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	s, err := miniotest.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "hostclient: FAIL: cannot start MinIO: %v\n", err)
		return 1
	}
	defer s.Stop()
	minio = s
	return m.Run()
}

const installation = 42

var buckets atomic.Int64

// service is the service side of a build host's world: the store, the lifecycle, logs, the
// artifacts in MinIO, a fake GitHub and the host API on 127.0.0.1.
type service struct {
	store     *sqlitestore.Store
	lifecycle *builds.Lifecycle
	logs      *buildlog.Files
	artifacts *s3artifacts.Store
	gh        *githubtest.Server
	server    *agentapi.Server
	api       *httptest.Server
	engines   string
	orgID     string
	project   *kiln.Project
	setting   *kiln.BuildSetting
	starts    atomic.Int64 // calls of POST /host/v1/start
}

func newService(t testing.TB) *service {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlitestore.Open(ctx, filepath.Join(dir, "kiln.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	logs, err := buildlog.NewFiles(filepath.Join(dir, "logs"))
	if err != nil {
		t.Fatal(err)
	}
	bucket := fmt.Sprintf("host-%d", buckets.Add(1))
	if err := minio.CreateBucket(ctx, bucket); err != nil {
		t.Fatal(err)
	}
	arts := s3artifacts.New(minio.Client(), s3artifacts.Location{Bucket: bucket, Prefix: "artifacts"}, s3artifacts.Options{})

	gh := githubtest.New(t)
	gh.AddInstallation(installation, "studio")
	gh.AddRepo(installation, "studio/shooter", true, "main").Commit("main", "Add the game", "Ada Lovelace", map[string]string{
		"Shooter/Shooter.uproject":           `{"EngineAssociation": "5.3"}`,
		"Shooter/Source/Shooter/Shooter.cpp": "// game\n",
	})
	gh.AddRepo(installation, "studio/slow", true, "main").Commit("main", "Slow", "Ada Lovelace", map[string]string{
		"Slow/Slow.uproject": `{"EngineAssociation": "5.3"}`,
		"Slow/FakeUAT.env":   "FAKE_UAT_SLEEP=600\n",
	})
	app, err := github.New(github.Config{APIURL: gh.URL(), WebURL: gh.WebURL(), AppID: gh.AppID, PrivateKeyPEM: gh.PrivateKeyPEM, HTTPClient: gh.Client()})
	if err != nil {
		t.Fatal(err)
	}

	now := time.Now().UTC()
	created, _ := storefixture.GitHubOrg(t, st, strconv.Itoa(installation), now)
	org := created.ID
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	lifecycle := &builds.Lifecycle{Builds: st, Projects: st, Artifacts: st, Logger: logger,
		Events: &builds.Fanout{Logs: logs, Logger: logger}} // ends the logs of builds that ended, as in AWS
	srv := &agentapi.Server{Store: st, Lifecycle: lifecycle, Logs: logs, Uploads: arts, GitHub: githubSource{app}, Logger: logger,
		PartSize: 5 << 20} // S3's smallest: an artifact of a few MiB comes in several parts
	s := &service{}
	handler := srv.Handler()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == agentapi.PathPrefix+"start" {
			s.starts.Add(1)
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(api.Close)

	enginesDir := filepath.Join(dir, "engines")
	if err := os.CopyFS(filepath.Join(enginesDir, "5.3"), os.DirFS("../../../testdata/fake-engine")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(enginesDir, "5.3", engines.RunUATPath), 0o755); err != nil {
		t.Fatal(err)
	}
	s.store, s.lifecycle, s.logs, s.artifacts, s.gh, s.server, s.api, s.engines, s.orgID = st, lifecycle, logs, arts, gh, srv, api, enginesDir, org
	s.project, s.setting = s.addProject(t, "studio/shooter", "Shooter/Shooter.uproject")
	return s
}

// githubSource is the GitHub App as the host API asks it.
type githubSource struct{ *github.Client }

func (g githubSource) CloneURL(ctx context.Context, installationID int64, fullName string) (string, error) {
	r, err := g.Repo(ctx, installationID, fullName)
	if err != nil {
		return "", err
	}
	return r.CloneURL, nil
}

func (s *service) addProject(t testing.TB, repo, uproject string) (*kiln.Project, *kiln.BuildSetting) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	p := &kiln.Project{ID: kiln.NewID(), OrganizationID: s.orgID, Name: repo, SourceControl: kiln.SourceGitHub, RepoLink: repo,
		InstallationID: strconv.Itoa(installation), DefaultBranch: "main", UprojectPath: uproject, CreatedAt: now, UpdatedAt: now}
	if err := s.store.CreateProject(ctx, p, 0); err != nil {
		t.Fatal(err)
	}
	st := &kiln.BuildSetting{ID: kiln.NewID(), OrganizationID: s.orgID, ProjectID: p.ID, Platform: kiln.PlatformLinux,
		BuildType: kiln.BuildTypeShipping, Branch: "main", UEVersion: "5.3", Trigger: kiln.TriggerManual, CreatedAt: now, UpdatedAt: now}
	if err := s.store.CreateBuildSetting(ctx, st); err != nil {
		t.Fatal(err)
	}
	return p, st
}

// claimed creates a build of the project's setting (in the project's organization) and claims it for a remote host as the
// Claim task does; it returns the build and its host credential.
func (s *service) claimed(t testing.TB, p *kiln.Project, st *kiln.BuildSetting) (*kiln.Build, string) {
	t.Helper()
	return s.claimedWith(t, p, st, nil)
}

// claimedWith is claimed with the build edited before it is created (nil: as it is).
func (s *service) claimedWith(t testing.TB, p *kiln.Project, st *kiln.BuildSetting, edit func(b *kiln.Build)) (*kiln.Build, string) {
	t.Helper()
	ctx := context.Background()
	b := &kiln.Build{ID: kiln.NewID(), OrganizationID: p.OrganizationID, ProjectID: p.ID, BuildSettingID: st.ID, Status: kiln.StatusPending,
		Platform: st.Platform, BuildType: st.BuildType, Branch: st.Branch, UEVersion: st.UEVersion, TriggeredBy: "manual", CreatedAt: time.Now().UTC()}
	if edit != nil {
		edit(b)
	}
	if err := s.store.CreateBuild(ctx, b); err != nil {
		t.Fatal(err)
	}
	cred, hash, err := hostcred.New(b.OrganizationID, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.lifecycle.ClaimHost(ctx, b.OrganizationID, b.ID, "codebuild", hash, time.Minute); err != nil {
		t.Fatal(err)
	}
	return b, cred
}

// host is a build host for the build whose credential is cred, as `kiln agent run` makes it.
func (s *service) host(t testing.TB, cred, runID string) *hostclient.Host {
	t.Helper()
	return &hostclient.Host{
		Client:    &hostclient.Client{BaseURL: s.api.URL, Credential: cred},
		HostRunID: runID, Engines: engines.Dir{Path: s.engines}, Steps: &buildsteps.Steps{},
		WorkDir: t.TempDir(), HeartbeatEvery: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

func (s *service) build(t testing.TB, id string) *kiln.Build {
	t.Helper()
	b, err := s.store.GetBuild(context.Background(), s.orgID, id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
