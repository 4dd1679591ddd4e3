package awsapp

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
)

// TestCancelAndSupersedeInAWSRecordWebhookDeliveries: the AWS API tells org webhooks of the
// changes it makes, as kiln serve does (it used to wire no events at all).
func TestCancelAndSupersedeInAWSRecordWebhookDeliveries(t *testing.T) {
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "kiln.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC().Truncate(time.Millisecond)
	created, err := accounts.CreateOrganization(ctx, st, accounts.NewOrganization{Name: "Studio", OwnerEmail: "a@studio.example", OwnerName: "A"}, now)
	if err != nil {
		t.Fatal(err)
	}
	org := created.Organization.ID
	keys, err := keyring.New(bytes.Repeat([]byte{7}, keyring.MasterKeySize))
	if err != nil {
		t.Fatal(err)
	}
	hook := &kiln.Webhook{ID: kiln.NewID(), OrganizationID: org, URL: "https://hooks.studio.example/kiln", Active: true,
		Events: []kiln.WebhookEvent{kiln.EventBuildFailed, kiln.EventBuildSuperseded}, Secret: []byte("sealed"), CreatedAt: now, UpdatedAt: now}
	if err := st.CreateWebhook(ctx, hook); err != nil {
		t.Fatal(err)
	}
	p := &kiln.Project{ID: kiln.NewID(), OrganizationID: org, Name: "P", SourceControl: kiln.SourceGitHub,
		RepoLink: "a/b", InstallationID: "1", CreatedAt: now, UpdatedAt: now}
	if err := st.CreateProject(ctx, p, 0); err != nil {
		t.Fatal(err)
	}
	newBuild := func(branch string) *kiln.Build {
		b := &kiln.Build{ID: kiln.NewID(), OrganizationID: org, ProjectID: p.ID, BuildSettingID: kiln.NewID(), Status: kiln.StatusPending,
			Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping, Branch: branch, UEVersion: "5.3", TriggeredBy: "cron", CreatedAt: now}
		if err := st.CreateBuild(ctx, b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	logs, err := buildlog.NewFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	api, err := newAPI(AWSConfig{}, st, logs, noArtifacts{}, keys, nil, nil, awsWorkflow{}, nil, nil, HostedHostsClients{}, slog.New(slog.NewTextHandler(io.Discard, nil)), LiveParts{})
	if err != nil {
		t.Fatal(err)
	}

	cancelled := newBuild("main")
	for range 2 { // the second cancel is 409 and records nothing more
		req := httptest.NewRequest("POST", "/builds/"+cancelled.ID+"/cancel", nil)
		req.Header.Set("Authorization", "Bearer "+created.Token)
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK && rec.Code != http.StatusConflict {
			t.Fatalf("cancel: %d %s", rec.Code, rec.Body)
		}
	}
	deliveries, _, err := st.ListWebhookDeliveries(ctx, org, hook.ID, store.Page{})
	if err != nil {
		t.Fatal(err)
	}
	if len(deliveries) != 1 || deliveries[0].Event != kiln.EventBuildFailed || !bytes.Contains(deliveries[0].Payload, []byte(cancelled.ID)) {
		t.Fatalf("after a cancel (twice): %d deliveries %+v, want one build.failed of %s", len(deliveries), deliveries, cancelled.ID)
	}

	// A trigger supersedes the earlier pending build of the same branch, platform and type.
	setting := &kiln.BuildSetting{ID: kiln.NewID(), OrganizationID: org, ProjectID: p.ID, Platform: kiln.PlatformLinux,
		BuildType: kiln.BuildTypeShipping, Branch: "main", UEVersion: "5.3", Trigger: kiln.TriggerManual, CreatedAt: now, UpdatedAt: now}
	if err := st.CreateBuildSetting(ctx, setting); err != nil {
		t.Fatal(err)
	}
	earlier := newBuild("main")
	req := httptest.NewRequest("POST", "/projects/"+p.ID+"/build-settings/"+setting.ID+"/trigger", nil)
	req.Header.Set("Authorization", "Bearer "+created.Token)
	api.ServeHTTP(httptest.NewRecorder(), req) // the build itself cannot start in AWS yet
	deliveries, _, err = st.ListWebhookDeliveries(ctx, org, hook.ID, store.Page{})
	if err != nil {
		t.Fatal(err)
	}
	superseded := 0
	for _, d := range deliveries {
		if d.Event == kiln.EventBuildSuperseded && bytes.Contains(d.Payload, []byte(earlier.ID)) {
			superseded++
		}
	}
	if superseded != 1 {
		t.Fatalf("after a trigger: %d build.superseded deliveries of the earlier build, want 1 (%d deliveries)", superseded, len(deliveries))
	}
}
