package httpapi

import (
	"context"
	"time"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/agentpool"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/plans"
	"github.com/kilnbuild/kiln/shared/store"
)

// What the handlers read and write of kiln's state, one small interface per kind of record:
// the Server holds these, not the whole store (Config.Store satisfies them all). Rules that
// change more than one record live in the services (builds, buildsettings, plans, accounts).

// organizationStore is an organization, its integrations and its members.
type organizationStore interface {
	GetOrganization(ctx context.Context, id string) (*kiln.Organization, error)
	UpdateOrganization(ctx context.Context, org *kiln.Organization) error
	GetOrganizationByInstallation(ctx context.Context, installationID string) (*kiln.Organization, error)
	LinkGitHubInstallation(ctx context.Context, orgID, installationID string, at time.Time) (*kiln.Organization, error)
	UnlinkGitHubInstallation(ctx context.Context, orgID string, at time.Time) (*kiln.Organization, error)
	SetPerforce(ctx context.Context, orgID string, creds *kiln.PerforceCredentials, at time.Time) (*kiln.Organization, error)
	ListMembers(ctx context.Context, orgID string, p store.Page) ([]*kiln.Member, string, error)
	GetMember(ctx context.Context, orgID, userID string) (*kiln.Member, error)
}

// projectStore is projects and the list of their build settings (a setting is saved through
// the buildsettings service).
type projectStore interface {
	GetProject(ctx context.Context, orgID, id string) (*kiln.Project, error)
	ListProjects(ctx context.Context, orgID string, f store.ProjectFilter, p store.Page) ([]*kiln.Project, string, error)
	CreateProject(ctx context.Context, p *kiln.Project, max int) error
	UpdateProject(ctx context.Context, p *kiln.Project) error
	DeleteProject(ctx context.Context, orgID, id string) error
	ListBuildSettings(ctx context.Context, orgID, projectID string) ([]*kiln.BuildSetting, error)
}

// buildHistory is what the API reads of builds and their artifacts (builds change through the
// builds service and its lifecycle only).
type buildHistory interface {
	GetBuild(ctx context.Context, orgID, id string) (*kiln.Build, error)
	ListBuilds(ctx context.Context, orgID string, f store.BuildFilter, p store.Page) ([]*kiln.Build, string, error)
	GetArtifact(ctx context.Context, orgID, buildID string) (*kiln.Artifact, error)
	ListArtifacts(ctx context.Context, orgID, projectID string, f store.ArtifactFilter, p store.Page) ([]*kiln.Artifact, string, error)
}

// credentialStore is the organization's credentials: API tokens, trigger tokens and agents.
type credentialStore interface {
	ListTokens(ctx context.Context, orgID, userID string, p store.Page) ([]*kiln.Token, string, error)
	CreateToken(ctx context.Context, t *kiln.Token) error
	DeleteToken(ctx context.Context, orgID, userID, tokenID string) error
	ListTriggerTokens(ctx context.Context, orgID string, p store.Page) ([]*kiln.TriggerToken, string, error)
	CreateTriggerToken(ctx context.Context, t *kiln.TriggerToken) error
	DeleteTriggerToken(ctx context.Context, orgID, id string) error
	GetTriggerTokenByHash(ctx context.Context, hash string) (*kiln.TriggerToken, error)
	TouchTriggerToken(ctx context.Context, orgID, id string, at time.Time) error
	ListAgents(ctx context.Context, orgID string, p store.Page) ([]*kiln.Agent, string, error)
	CreateAgent(ctx context.Context, a *kiln.Agent) error
}

// webhookStore is the organization's webhooks and their deliveries.
type webhookStore interface {
	ListWebhooks(ctx context.Context, orgID string) ([]*kiln.Webhook, error)
	GetWebhook(ctx context.Context, orgID, id string) (*kiln.Webhook, error)
	CreateWebhook(ctx context.Context, w *kiln.Webhook) error
	UpdateWebhook(ctx context.Context, w *kiln.Webhook) error
	DeleteWebhook(ctx context.Context, orgID, id string) error
	ListWebhookDeliveries(ctx context.Context, orgID, webhookID string, p store.Page) ([]*kiln.WebhookDelivery, string, error)
}

// memberChanges changes and removes members (the store keeps an organization's last owner).
type memberChanges interface {
	SetMemberRole(ctx context.Context, orgID, userID string, role kiln.Role) (*kiln.Member, error)
	RemoveMember(ctx context.Context, orgID, userID string) error
}

// onceKeys remembers single-use keys (the GitHub install flow's states).
type onceKeys interface {
	UseOnce(ctx context.Context, orgID, key string, now, expires time.Time) error
}

// stores are the Server's views of Config.Store, plus what the services it calls take.
type stores struct {
	orgs        organizationStore
	projects    projectStore
	history     buildHistory
	credentials credentialStore
	hooks       webhookStore
	auditLog    auditRecorder
	auditLogs   auditLogReader
	members     memberChanges
	invites     invitationStore
	users       userStore
	orgCreator  accounts.Store
	once        onceKeys
	// agentRevocations, projectCreator and artifactSizes are what agentpool.Revoke,
	// plans.CreateProject and plans.Report read and write.
	agentRevocations agentpool.Store
	projectCreator   plans.ProjectCreator
	artifactSizes    plans.ArtifactSizes
}

func storesOf(st store.Store) stores {
	return stores{orgs: st, projects: st, history: st, credentials: st, hooks: st, auditLog: st, auditLogs: st, members: st, invites: st, users: st, orgCreator: st, once: st,
		agentRevocations: st, projectCreator: st, artifactSizes: st}
}

// userStore is the people who sign in with GitHub, their memberships and console sessions.
type userStore interface {
	SignInGitHubUser(ctx context.Context, u *kiln.GitHubUser) (*kiln.GitHubUser, error)
	GetGitHubUser(ctx context.Context, userID string) (*kiln.GitHubUser, error)
	ListMemberships(ctx context.Context, userID string) ([]*kiln.Member, error)
	CreateSession(ctx context.Context, s *kiln.Session) error
	ListSessions(ctx context.Context, userID string, now time.Time) ([]*kiln.Session, error)
	SetSessionOrganization(ctx context.Context, userID, sessionID, orgID string) (*kiln.Session, error)
	DeleteSession(ctx context.Context, userID, sessionID string) error
}
