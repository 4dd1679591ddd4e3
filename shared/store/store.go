// Package store defines how kiln keeps its state. The interface follows DynamoDB's access
// patterns: every item lives under its organization (except the lookups of API and trigger tokens
// by hash), every list is a query on one partition in sort-key order with a cursor that is the last
// key returned, and status changes are conditional writes. Implementations: sqlitestore (one
// machine) and dynamostore (AWS). storetest holds the contract suite both pass.
package store

import (
	"context"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Page asks for one page of a list, newest first.
type Page struct {
	// Limit is the most items to return; outside 1..MaxLimit it is read as MaxLimit.
	Limit int
	// After is the id of the last item of the previous page, or empty for the first page.
	After string
}

// MaxLimit is the largest page a store returns.
const MaxLimit = 100

// DueScanBudget bounds how many due entries DueBuildDeliveries and DueWebhookDeliveries may read
// to fill their per-organization quota. A store that reads one queue in due order (DynamoDB) may
// return fewer than limit when more than this many due entries of already-full organizations come
// first; SQLite selects exactly.
const DueScanBudget = 1000

// Store is all of kiln's state. Methods return *kiln.Error with code not_found for a missing item
// (including one of another organization), conflict for a create whose unique key is taken,
// invalid_state for a conditional build update whose condition failed, and
// github_installation_in_use for an installation linked elsewhere. List methods return the
// items and the id to pass as Page.After for the next page ("" when there are no more).
type Store interface {
	Organizations
	AuditLog
	Members
	Users
	Invitations
	Tokens
	TriggerTokens
	Agents
	Projects
	BuildSettings
	Builds
	Artifacts
	Webhooks
	OnceKeys
	Usage
	HostedHosts
	Close() error
}

// Organizations keeps organizations.
type Organizations interface {
	// CreateOrganization creates an organization together with its first member and that member's
	// token (nil for a signed-in GitHub user, who may already belong to other organizations), in
	// one atomic write. The slug must be free (conflict otherwise). A new organization starts
	// with no integrations, whatever org.Integrations holds.
	CreateOrganization(ctx context.Context, org *kiln.Organization, owner *kiln.Member, token *kiln.Token) error
	GetOrganization(ctx context.Context, id string) (*kiln.Organization, error)
	// UpdateOrganization replaces the organization's editable fields (name, plan,
	// maxConcurrentBuilds, default project settings, updatedAt). The slug never changes, and neither do the integrations: only
	// LinkGitHubInstallation and UnlinkGitHubInstallation change those.
	UpdateOrganization(ctx context.Context, org *kiln.Organization) error
	// LinkGitHubInstallation links a GitHub App installation to the organization, replacing the
	// one it had. An installation belongs to at most one organization: one linked elsewhere gives
	// github_installation_in_use and nothing changes. Linking the same installation again is a
	// no-op. Returns the updated organization.
	LinkGitHubInstallation(ctx context.Context, orgID, installationID string, at time.Time) (*kiln.Organization, error)
	// UnlinkGitHubInstallation removes the organization's installation, if any, and frees it for
	// other organizations.
	UnlinkGitHubInstallation(ctx context.Context, orgID string, at time.Time) (*kiln.Organization, error)
	// SetPerforce saves (or, with nil, removes) the organization's Perforce credentials and sets
	// updatedAt; UpdateOrganization never changes them. Returns the updated organization.
	SetPerforce(ctx context.Context, orgID string, creds *kiln.PerforceCredentials, at time.Time) (*kiln.Organization, error)
	// GetOrganizationByInstallation finds the organization an installation is linked to.
	GetOrganizationByInstallation(ctx context.Context, installationID string) (*kiln.Organization, error)
}

// AuditLog keeps each organization's audit log for kiln.AuditRetention.
type AuditLog interface {
	// RecordAudit adds an event (its ID new, from kiln.NewID, so ids sort by time).
	RecordAudit(ctx context.Context, e *kiln.AuditEvent) error
	// ListAudit pages through the organization's events, newest first, narrowed by f.
	ListAudit(ctx context.Context, orgID string, f kiln.AuditFilter, p Page) ([]*kiln.AuditEvent, string, error)
}

// Members keeps users and their memberships. A user made by an operator or an invitation form
// belongs to one organization; a user who signs in with GitHub (Users) may belong to several,
// under the same user id.
type Members interface {
	// CreateMember adds a user to an organization together with a first token (nil for a GitHub
	// user, who may already belong to other organizations). The email (compared
	// case-insensitively) must be new in the organization (conflict otherwise).
	CreateMember(ctx context.Context, m *kiln.Member, token *kiln.Token) error
	GetMember(ctx context.Context, orgID, userID string) (*kiln.Member, error)
	ListMembers(ctx context.Context, orgID string, p Page) ([]*kiln.Member, string, error)
	// SetMemberRole changes a member's role and answers the member as it now is: not_found for no
	// such member, invalid_state (kiln.ErrLastOwner) when it would leave the organization without
	// an owner. Two owners demoting each other at once cannot both succeed.
	SetMemberRole(ctx context.Context, orgID, userID string, role kiln.Role) (*kiln.Member, error)
	// RemoveMember takes a member out of the organization and revokes every token they hold in
	// it: not_found for no such member, invalid_state (kiln.ErrLastOwner) for its last owner.
	// Their tokens stop resolving when the membership is gone, even if a crash leaves some behind.
	RemoveMember(ctx context.Context, orgID, userID string) error
}

// Users keeps the people who sign in with GitHub and their console sessions.
type Users interface {
	// SignInGitHubUser records a sign-in: the first one creates the user with u's fields (u.ID
	// new, from kiln.NewID); a later one, found by u.GitHubID, updates the stored user's email,
	// name and login and keeps its ID and CreatedAt. Answers the user as stored.
	SignInGitHubUser(ctx context.Context, u *kiln.GitHubUser) (*kiln.GitHubUser, error)
	// GetGitHubUser reads a user by kiln user id (not_found when none).
	GetGitHubUser(ctx context.Context, userID string) (*kiln.GitHubUser, error)
	// ListMemberships lists every membership of the user, in any organization, oldest first (a
	// user has few).
	ListMemberships(ctx context.Context, userID string) ([]*kiln.Member, error)
	// CreateSession stores a session; a taken id or hash is conflict.
	CreateSession(ctx context.Context, s *kiln.Session) error
	// GetSessionByHash finds a session by the SHA-256 of its secret, expired or not (not_found
	// when none or deleted).
	GetSessionByHash(ctx context.Context, hash string) (*kiln.Session, error)
	// ListSessions lists the user's sessions that have not expired at now, newest first.
	ListSessions(ctx context.Context, userID string, now time.Time) ([]*kiln.Session, error)
	// SetSessionOrganization makes the user's session act for orgID and answers it as it now is
	// (not_found when the user has no such session). The caller checks the membership.
	SetSessionOrganization(ctx context.Context, userID, sessionID, orgID string) (*kiln.Session, error)
	// DeleteSession signs a session out: not_found when the user has no such session.
	DeleteSession(ctx context.Context, userID, sessionID string) error
}

// Invitations keeps the invitations to join an organization. An organization has at most one
// invitation per email (compared case-insensitively): a new one replaces the old, whose link stops
// working. An invitation is removed when it is accepted or revoked; an expired one stays (listed
// with its ExpiresAt) until it is revoked or replaced.
type Invitations interface {
	// CreateInvitation stores an invitation of an existing organization (not_found otherwise),
	// replacing the organization's invitation for the same email, if any. An email that is
	// already a member's is conflict, and so is a taken id or hash; nothing changes then.
	CreateInvitation(ctx context.Context, inv *kiln.Invitation) error
	// GetInvitationByHash finds an invitation by the SHA-256 of its secret, expired or not
	// (not_found when none): not scoped to an organization, because the secret is what tells it.
	GetInvitationByHash(ctx context.Context, hash string) (*kiln.Invitation, error)
	// ListInvitations lists the organization's invitations, expired ones included, newest first.
	ListInvitations(ctx context.Context, orgID string, p Page) ([]*kiln.Invitation, string, error)
	// DeleteInvitation revokes an invitation: not_found when the organization has no such one.
	DeleteInvitation(ctx context.Context, orgID, id string) error
	// AcceptInvitation removes the invitation inv (as read by GetInvitationByHash) and creates
	// the member m with a first token (nil for a GitHub user), in one atomic step, only if the
	// invitation is still stored and has not expired at now: otherwise kiln.ErrInvitationInvalid
	// and nothing changes. An email taken by a member meanwhile is conflict, and the invitation
	// stays. Of many concurrent accepts of one invitation exactly one succeeds.
	AcceptInvitation(ctx context.Context, inv *kiln.Invitation, now time.Time, m *kiln.Member, token *kiln.Token) error
}

// Tokens keeps API tokens.
type Tokens interface {
	CreateToken(ctx context.Context, t *kiln.Token) error
	// GetTokenByHash finds a token by the SHA-256 of its secret: the one lookup not scoped to an
	// organization, because the token is what tells the organization.
	GetTokenByHash(ctx context.Context, hash string) (*kiln.Token, error)
	// ListTokens lists a user's tokens, newest first.
	ListTokens(ctx context.Context, orgID, userID string, p Page) ([]*kiln.Token, string, error)
	// DeleteToken revokes a user's token.
	DeleteToken(ctx context.Context, orgID, userID, tokenID string) error
}

// TriggerTokens keeps organizations' Perforce trigger tokens.
type TriggerTokens interface {
	// CreateTriggerToken adds a token to an organization; a taken id or hash is conflict. Like
	// CreateToken, it is for an organization the caller has just read: not every store checks
	// that the organization exists.
	CreateTriggerToken(ctx context.Context, t *kiln.TriggerToken) error
	// GetTriggerTokenByHash finds a token by the SHA-256 of its secret (not_found when none). Like
	// GetTokenByHash it is not scoped to an organization, because the token is what tells the
	// organization.
	GetTriggerTokenByHash(ctx context.Context, hash string) (*kiln.TriggerToken, error)
	// ListTriggerTokens lists an organization's trigger tokens, newest first.
	ListTriggerTokens(ctx context.Context, orgID string, p Page) ([]*kiln.TriggerToken, string, error)
	// DeleteTriggerToken revokes one of the organization's trigger tokens; another organization's
	// is not_found and stays.
	DeleteTriggerToken(ctx context.Context, orgID, id string) error
	// TouchTriggerToken records that the token was used at time at (its LastUsedAt); not_found
	// when the organization has no such token (any more).
	TouchTriggerToken(ctx context.Context, orgID, id string, at time.Time) error
}

// Agents keeps organizations' build agents (`kiln agent`) and their tokens' hashes.
type Agents interface {
	// CreateAgent adds an agent to an organization; a taken id or hash is conflict. Like
	// CreateToken, it is for an organization the caller has just read.
	CreateAgent(ctx context.Context, a *kiln.Agent) error
	// GetAgentByHash finds an agent, revoked or not, by the SHA-256 of its token (not_found when
	// none): not scoped to an organization, because the token is what tells the organization.
	GetAgentByHash(ctx context.Context, hash string) (*kiln.Agent, error)
	// GetAgent reads one of the organization's agents; another organization's is not_found.
	GetAgent(ctx context.Context, orgID, id string) (*kiln.Agent, error)
	// ListAgents lists an organization's agents, revoked ones included, newest first.
	ListAgents(ctx context.Context, orgID string, p Page) ([]*kiln.Agent, string, error)
	// RevokeAgent records that the agent's token was revoked at time at and returns the agent; a
	// revoked agent keeps its first RevokedAt. not_found when the organization has no such agent.
	RevokeAgent(ctx context.Context, orgID, id string, at time.Time) (*kiln.Agent, error)
	// TouchAgent records that the agent called at time at (its LastSeenAt); not_found when the
	// organization has no such agent.
	TouchAgent(ctx context.Context, orgID, id string, at time.Time) error
}

// ProjectFilter narrows a project list.
type ProjectFilter struct {
	SourceControl kiln.SourceControl // empty: all
}

// Projects keeps projects.
type Projects interface {
	// CreateProject adds a project to an existing organization (not_found otherwise; conflict when
	// its id is taken) only while the organization has fewer than max projects (max 0: no limit).
	// The count and the write are one atomic step, so projects created at the same moment never
	// exceed max: at the limit it returns ProjectLimitReached (plan_limit_reached) and writes
	// nothing.
	CreateProject(ctx context.Context, p *kiln.Project, max int) error
	GetProject(ctx context.Context, orgID, id string) (*kiln.Project, error)
	ListProjects(ctx context.Context, orgID string, f ProjectFilter, p Page) ([]*kiln.Project, string, error)
	// UpdateProject replaces a project's mutable fields (name, description, uproject,
	// lastBuildAt, lastBuildStatus, updatedAt).
	UpdateProject(ctx context.Context, p *kiln.Project) error
	// DeleteProject deletes the project and its build settings; its builds stay.
	DeleteProject(ctx context.Context, orgID, id string) error
}

// BuildSettings keeps build settings, each under its project.
type BuildSettings interface {
	// CreateBuildSetting adds a setting to an existing project (not_found otherwise).
	CreateBuildSetting(ctx context.Context, s *kiln.BuildSetting) error
	GetBuildSetting(ctx context.Context, orgID, projectID, id string) (*kiln.BuildSetting, error)
	// ListBuildSettings lists all of a project's settings, oldest first (a project has few).
	ListBuildSettings(ctx context.Context, orgID, projectID string) ([]*kiln.BuildSetting, error)
	UpdateBuildSetting(ctx context.Context, s *kiln.BuildSetting) error
	DeleteBuildSetting(ctx context.Context, orgID, projectID, id string) error
	// ScheduledBuildSettings lists every setting with trigger scheduled, across organizations:
	// the scheduler's scan. Not for request paths.
	ScheduledBuildSettings(ctx context.Context) ([]*kiln.BuildSetting, error)
}

// BuildFilter narrows a build list; empty fields match everything. ProjectID, BuildSettingID and
// Status each select an index; the other fields filter within it.
type BuildFilter struct {
	ProjectID      string
	BuildSettingID string
	Status         kiln.BuildStatus
	Platform       kiln.Platform
	BuildType      kiln.BuildType
	Branch         string
}

// ArtifactFilter narrows an artifact list; empty fields match everything.
type ArtifactFilter struct {
	BuildSettingID string
	Branch         string
	Commit         string
}

// Artifacts keeps the records of packaged builds (the files live in an artifact store), one per
// build, keyed by the build id.
type Artifacts interface {
	// CreateArtifact records a build's artifact; a second one for the same build is conflict.
	CreateArtifact(ctx context.Context, a *kiln.Artifact) error
	GetArtifact(ctx context.Context, orgID, buildID string) (*kiln.Artifact, error)
	// ListArtifacts lists a project's artifacts, newest build first, also after the project was
	// deleted.
	ListArtifacts(ctx context.Context, orgID, projectID string, f ArtifactFilter, p Page) ([]*kiln.Artifact, string, error)
	DeleteArtifact(ctx context.Context, orgID, buildID string) error
	// ArtifactsCreatedBefore lists artifacts made before t across organizations, oldest first:
	// the retention janitor's scan. Not for request paths.
	ArtifactsCreatedBefore(ctx context.Context, t time.Time, limit int) ([]*kiln.Artifact, error)
}

// Builds keeps builds.
type Builds interface {
	// CreateBuild stores b and sets b.Number to its project's next build number, taken
	// atomically with the write (whatever b.Number held is replaced), so concurrent creations
	// never share a number; a creation that fails may skip one. A build whose project is not
	// stored gets no number (0). CreateBuildOnce numbers the build it creates the same way.
	CreateBuild(ctx context.Context, b *kiln.Build) error
	GetBuild(ctx context.Context, orgID, id string) (*kiln.Build, error)
	ListBuilds(ctx context.Context, orgID string, f BuildFilter, p Page) ([]*kiln.Build, string, error)
	// UpdateBuild writes the fields of b named in fields, and nothing else, only if the stored
	// build's status is still expected; otherwise it returns invalid_state and writes nothing.
	// Fields it does not name keep what is stored, so writers that changed different fields
	// from the same read (kiln.ChangedBuildFields) do not undo each other. An empty TaskToken is
	// never written (a token is never removed). After the write b is the build as stored: it
	// carries what others wrote to the fields it left alone (such as the workflow's task token).
	// A write that ends the build also adds its BuildMinutes to the organization's usage,
	// atomically with it (see MetersEnd). Of many concurrent updates from the same status,
	// exactly one succeeds when they change the status.
	UpdateBuild(ctx context.Context, b *kiln.Build, expected kiln.BuildStatus, fields kiln.BuildFields) error
	// CreateBuildOnce creates b under an idempotency key of its organization, atomically: if the
	// key is new, b is created and recorded with the key and fingerprint (a digest of the
	// request); if the key was used before, nothing is written and the build recorded with it is
	// returned with the fingerprint recorded then, so the caller can tell a repeat of the same
	// request from a different one. created reports which happened.
	CreateBuildOnce(ctx context.Context, b *kiln.Build, key, fingerprint string) (build *kiln.Build, storedFingerprint string, created bool, err error)
	// QueuedBuilds lists builds in a status (pending or running) across all organizations,
	// oldest first: the one-machine work queue and the scan for builds a crash left running.
	// Not for request paths.
	QueuedBuilds(ctx context.Context, status kiln.BuildStatus, limit int) ([]*kiln.Build, error)
	// QueuedBuildsAfter is QueuedBuilds from the build after the one with id afterID on (from
	// the start when it is ""): the next page of the queue, so a reader can see all of it.
	QueuedBuildsAfter(ctx context.Context, status kiln.BuildStatus, afterID string, limit int) ([]*kiln.Build, error)
	// DueBuildDeliveries lists complete builds whose autoDeployStatus is pending or delivering
	// and whose AutoDeployNextAt is not after now, across all organizations, earliest due first
	// (then by id), at most perOrg of each organization (outside 1..MaxLimit: MaxLimit): the
	// deliverer's queue, read fairly. Not for request paths. See DueScanBudget.
	DueBuildDeliveries(ctx context.Context, now time.Time, perOrg, limit int) ([]*kiln.Build, error)
	// RecordBuildDelivery writes b's autoDeployStatus, autoDeployError, autoDeployAttempts and
	// autoDeployNextAt, and nothing else, only if the stored build is complete, its
	// autoDeployStatus pending or delivering and its autoDeployNextAt still expectedNextAt: invalid_state otherwise (another worker took or
	// recorded the attempt), not_found for a missing build. Of many concurrent writes with the same
	// expectedNextAt exactly one succeeds, so it claims an attempt.
	RecordBuildDelivery(ctx context.Context, b *kiln.Build, expectedNextAt time.Time) error
	// QueuedBuildDeliveries counts the organization's complete builds whose autoDeployStatus is
	// pending or delivering, stopping at upTo: the cap on redeliveries.
	QueuedBuildDeliveries(ctx context.Context, orgID string, upTo int) (int, error)
}

// OnceKeys records keys that may be used only once, such as the nonce of the GitHub install
// flow's signed state.
type OnceKeys interface {
	// UseOnce records key for the organization until expires. A key recorded before whose expiry
	// is after now is conflict, and nothing changes; of many concurrent uses of a key exactly one
	// succeeds. An expired key may be recorded again (what it names has expired too).
	UseOnce(ctx context.Context, orgID, key string, now, expires time.Time) error
}

// HostedHosts keeps the records of kiln's own build hosts (EC2 instances of the hosted pool):
// when each was first seen in service and the one build it claimed.
type HostedHosts interface {
	// GetHostedHost reads an instance's record; not_found when there is none.
	GetHostedHost(ctx context.Context, id string) (*kiln.HostedHost, error)
	// SeeHostedHost records that the instance is in service (SeenAt now) unless a record exists,
	// and returns the stored record: the first sighting's time stays.
	SeeHostedHost(ctx context.Context, id string, now time.Time) (*kiln.HostedHost, error)
	// ClaimHostedHost records h's claim (ClaimedAt, OrganizationID, BuildID; SeenAt when there is
	// no record yet). An instance that claimed already is conflict and nothing changes; of many
	// concurrent claims of an instance exactly one succeeds.
	ClaimHostedHost(ctx context.Context, h *kiln.HostedHost) error
}

// Webhooks keeps organization webhooks and their delivery log.
type Webhooks interface {
	CreateWebhook(ctx context.Context, w *kiln.Webhook) error
	GetWebhook(ctx context.Context, orgID, id string) (*kiln.Webhook, error)
	// ListWebhooks lists all of an organization's webhooks, oldest first (an organization has few).
	ListWebhooks(ctx context.Context, orgID string) ([]*kiln.Webhook, error)
	// UpdateWebhook replaces url, events, active, secret and updatedAt; the format never changes.
	UpdateWebhook(ctx context.Context, w *kiln.Webhook) error
	// DeleteWebhook deletes the webhook and its delivery log.
	DeleteWebhook(ctx context.Context, orgID, id string) error

	// CreateWebhookDelivery records a delivery of an existing webhook (not_found otherwise).
	CreateWebhookDelivery(ctx context.Context, d *kiln.WebhookDelivery) error
	GetWebhookDelivery(ctx context.Context, orgID, webhookID, id string) (*kiln.WebhookDelivery, error)
	// ListWebhookDeliveries lists a webhook's deliveries, newest first.
	ListWebhookDeliveries(ctx context.Context, orgID, webhookID string, p Page) ([]*kiln.WebhookDelivery, string, error)
	// UpdateWebhookDelivery replaces status, attempts, responseStatus, error, nextAttemptAt and
	// updatedAt.
	UpdateWebhookDelivery(ctx context.Context, d *kiln.WebhookDelivery) error
	// DueWebhookDeliveries lists pending deliveries whose NextAttemptAt is not after now, across
	// organizations, earliest due first (then by id), at most perOrg of each organization: the
	// webhook sender's queue, read fairly. Not for request paths. Limits outside 1..MaxLimit are
	// MaxLimit. See DueScanBudget.
	DueWebhookDeliveries(ctx context.Context, now time.Time, perOrg, limit int) ([]*kiln.WebhookDelivery, error)
	// RecordWebhookDelivery is UpdateWebhookDelivery (plus nextAttemptAt) only if the stored
	// delivery is pending and its NextAttemptAt is still expectedNextAt: invalid_state otherwise,
	// not_found for a missing delivery. Of many concurrent writes with the same expectedNextAt
	// exactly one succeeds, so it claims an attempt.
	RecordWebhookDelivery(ctx context.Context, d *kiln.WebhookDelivery, expectedNextAt time.Time) error
	// QueuedWebhookDeliveries counts the organization's pending deliveries, stopping at upTo: the
	// cap on redeliveries.
	QueuedWebhookDeliveries(ctx context.Context, orgID string, upTo int) (int, error)
}
