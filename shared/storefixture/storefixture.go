// Package storefixture makes the records tests start from — an SQLite store, an organization
// with its owner and token, a project, a build setting, a build — so that tests of every package
// share one fixture instead of each writing its own. It is for tests only.
package storefixture

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
)

// SQLite opens a new SQLite store in a temporary directory; it is closed when the test ends.
func SQLite(t testing.TB) *sqlitestore.Store {
	t.Helper()
	st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "kiln.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Org creates an organization on plan ("" : the default plan) with its owner, and returns it
// with the owner's API token.
func Org(t testing.TB, st store.Store, plan kiln.Plan, at time.Time) (*kiln.Organization, string) {
	t.Helper()
	id := kiln.NewID()
	created, err := accounts.CreateOrganization(context.Background(), st, accounts.NewOrganization{
		Name: "Studio " + id, OwnerEmail: "owner-" + kiln.Slugify(id) + "@studio.example", OwnerName: "Owner", Plan: plan}, at)
	if err != nil {
		t.Fatal(err)
	}
	return created.Organization, created.Token
}

// GitHubOrg creates an organization as Org does and links it to the GitHub App installation
// installation, as the App's install flow would.
func GitHubOrg(t testing.TB, st store.Store, installation string, at time.Time) (*kiln.Organization, string) {
	t.Helper()
	org, token := Org(t, st, "", at)
	if _, err := st.LinkGitHubInstallation(context.Background(), org.ID, installation, at); err != nil {
		t.Fatal(err)
	}
	return org, token
}

// Project creates the GitHub project "Shooter" (studio/shooter, Shooter.uproject) of org.
func Project(t testing.TB, st store.Store, orgID string, at time.Time) *kiln.Project {
	t.Helper()
	p := &kiln.Project{ID: kiln.NewID(), OrganizationID: orgID, Name: "Shooter", SourceControl: kiln.SourceGitHub,
		UprojectPath: "Shooter.uproject", RepoLink: "studio/shooter", InstallationID: "1", DefaultBranch: "main",
		CreatedAt: at, UpdatedAt: at}
	if err := st.CreateProject(context.Background(), p, 0); err != nil {
		t.Fatal(err)
	}
	return p
}

// Setting creates a manual Linux Shipping build setting of p on main with Unreal Engine 5.3,
// changed by edit first.
func Setting(t testing.TB, st store.Store, p *kiln.Project, at time.Time, edit ...func(*kiln.BuildSetting)) *kiln.BuildSetting {
	t.Helper()
	s := &kiln.BuildSetting{ID: kiln.NewID(), OrganizationID: p.OrganizationID, ProjectID: p.ID, Platform: kiln.PlatformLinux,
		BuildType: kiln.BuildTypeShipping, UEVersion: "5.3", Branch: "main", Trigger: kiln.TriggerManual, CreatedAt: at, UpdatedAt: at}
	for _, e := range edit {
		e(s)
	}
	if err := st.CreateBuildSetting(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s
}

// NewBuild is a build of org in status, created at at, of a setting and project that need not
// exist: a running one started then, with its host's heartbeat. Stores take it with CreateBuild.
func NewBuild(orgID string, status kiln.BuildStatus, at time.Time) *kiln.Build {
	at = at.UTC()
	b := &kiln.Build{ID: kiln.NewID(), OrganizationID: orgID, ProjectID: kiln.NewID(), BuildSettingID: kiln.NewID(),
		Status: status, Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping, Branch: "main", UEVersion: "5.3",
		TriggeredBy: "cron", CreatedAt: at}
	if status == kiln.StatusRunning {
		b.StartedAt, b.HeartbeatAt, b.Host = &at, &at, "host-a"
	}
	return b
}

// Build stores NewBuild(org, status, at), changed by edit first.
func Build(t testing.TB, st store.Store, orgID string, status kiln.BuildStatus, at time.Time, edit ...func(*kiln.Build)) *kiln.Build {
	t.Helper()
	b := NewBuild(orgID, status, at)
	for _, e := range edit {
		e(b)
	}
	if err := st.CreateBuild(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	return b
}
