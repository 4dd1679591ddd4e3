package dynamostore

import (
	"context"
	"time"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// orgItem is an organization: PK "ORG#<id>", SK "ORG".
type orgItem struct {
	itemKeys
	ID                   string        `dynamo:"id"`
	Name                 string        `dynamo:"name"`
	Slug                 string        `dynamo:"slug"`
	Plan                 string        `dynamo:"plan"`
	MaxConcurrentBuilds  int           `dynamo:"maxConcurrentBuilds,omitempty"`
	Defaults             defaultsAttr  `dynamo:"defaultProjectSettings,omitempty"`
	GitHubInstallationID string        `dynamo:"githubInstallationId,omitempty"`
	Perforce             *perforceAttr `dynamo:"perforce,omitempty"`
	// ProjectCount is the number of the organization's projects (see attrProjectCount); nil on
	// organizations stored before it existed. Only CreateProject and DeleteProject write it.
	ProjectCount *int  `dynamo:"projectCount,omitempty"`
	CreatedAt    int64 `dynamo:"createdAt"`
	UpdatedAt    int64 `dynamo:"updatedAt"`
}

// perforceAttr is an organization's Perforce credentials, a map attribute absent when none are
// saved. Only SetPerforce writes it.
type perforceAttr struct {
	ServerURL   string `dynamo:"serverUrl,omitempty"`
	UserName    string `dynamo:"userName,omitempty"`
	Ticket      []byte `dynamo:"ticket,omitempty"` // binary, sealed
	Fingerprint string `dynamo:"fingerprint,omitempty"`
	UpdatedAt   int64  `dynamo:"updatedAt"`
	// Password (sealed) and TicketExpiresAt are left out for a ticket given by the customer.
	Password        []byte `dynamo:"password,omitempty"`
	TicketExpiresAt int64  `dynamo:"ticketExpiresAt,omitempty"`
}

func newPerforceAttr(c *kiln.PerforceCredentials) *perforceAttr {
	return &perforceAttr{
		ServerURL: c.ServerURL, UserName: c.UserName, Ticket: c.Ticket, Fingerprint: c.Fingerprint,
		UpdatedAt: toMS(c.UpdatedAt), Password: c.Password, TicketExpiresAt: optToMS(c.TicketExpiresAt),
	}
}

// optToMS is toMS, with the zero time as 0.
func optToMS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return toMS(t)
}

func (p *perforceAttr) credentials() *kiln.PerforceCredentials {
	if p == nil {
		return nil
	}
	return &kiln.PerforceCredentials{
		ServerURL: p.ServerURL, UserName: p.UserName, Ticket: p.Ticket, Fingerprint: p.Fingerprint,
		UpdatedAt: fromMS(p.UpdatedAt), Password: p.Password, TicketExpiresAt: optFromMS(p.TicketExpiresAt),
	}
}

// optFromMS is fromMS, with 0 as the zero time.
func optFromMS(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return fromMS(ms)
}

// defaultsAttr is an organization's default project settings, a map attribute.
type defaultsAttr struct {
	Platform         string `dynamo:"platform,omitempty"`
	BuildType        string `dynamo:"buildType,omitempty"`
	UEVersion        string `dynamo:"ueVersion,omitempty"`
	Trigger          string `dynamo:"trigger,omitempty"`
	NotifyOnComplete *bool  `dynamo:"notifyOnComplete,omitempty"`
}

// orgMutable are the attributes UpdateOrganization replaces. githubInstallationId is not one:
// only LinkGitHubInstallation and UnlinkGitHubInstallation write it, together with the
// installation's own item. Nor is perforce: only SetPerforce writes it.
var orgMutable = []string{"name", "plan", "maxConcurrentBuilds", "defaultProjectSettings", "updatedAt"}

// slugItem reserves a slug across all organizations: PK = SK = "SLUG#<slug>".
type slugItem struct {
	itemKeys
	OrganizationID string `dynamo:"organizationId"`
}

func newOrgItem(o *kiln.Organization) *orgItem {
	d := o.DefaultProjectSettings
	return &orgItem{
		itemKeys: itemKeys{PK: orgPK(o.ID), SK: orgSK, Type: typeOrganization},
		ID:       o.ID, Name: o.Name, Slug: o.Slug, Plan: string(o.Plan), MaxConcurrentBuilds: o.MaxConcurrentBuilds,
		Defaults: defaultsAttr{
			Platform: string(d.Platform), BuildType: string(d.BuildType), UEVersion: d.UEVersion,
			Trigger: string(d.Trigger), NotifyOnComplete: d.NotifyOnComplete,
		},
		// No GitHubInstallationID or Perforce: a new organization has neither, and
		// UpdateOrganization writes neither (see orgMutable).
		CreatedAt: toMS(o.CreatedAt),
		UpdatedAt: toMS(o.UpdatedAt),
	}
}

func (it *orgItem) organization() *kiln.Organization {
	d := it.Defaults
	return &kiln.Organization{
		ID: it.ID, Name: it.Name, Slug: it.Slug, Plan: kiln.Plan(it.Plan), MaxConcurrentBuilds: it.MaxConcurrentBuilds,
		DefaultProjectSettings: kiln.ProjectDefaults{
			Platform: kiln.Platform(d.Platform), BuildType: kiln.BuildType(d.BuildType), UEVersion: d.UEVersion,
			Trigger: kiln.Trigger(d.Trigger), NotifyOnComplete: d.NotifyOnComplete,
		},
		Integrations: kiln.Integrations{GitHubInstallationID: it.GitHubInstallationID},
		Perforce:     it.Perforce.credentials(),
		CreatedAt:    fromMS(it.CreatedAt),
		UpdatedAt:    fromMS(it.UpdatedAt),
	}
}

// CreateOrganization writes, in one transaction and each only if absent: the organization, its
// slug reservation, the owner's member and email items, and the owner's token with its hash item.
// The organization starts without integrations; LinkGitHubInstallation links one.
func (s *Store) CreateOrganization(ctx context.Context, org *kiln.Organization, owner *kiln.Member, token *kiln.Token) error {
	it := newOrgItem(org)
	it.ProjectCount = new(int) // a new organization has no projects
	puts := []*dynamo.Put{
		s.table.Put(it).If(notExists, attrPK),
		s.table.Put(&slugItem{
			itemKeys:       itemKeys{PK: slugKey(org.Slug), SK: slugKey(org.Slug), Type: typeSlug},
			OrganizationID: org.ID,
		}).If(notExists, attrPK),
	}
	var kinds []string // what a failed condition at each position means
	kinds = append(kinds, "organization id", "slug")
	if owner != nil {
		m := *owner
		m.OrganizationID = org.ID
		puts = append(puts, s.memberPuts(&m)...)
		kinds = append(kinds, "member", "email")
	}
	if token != nil {
		t := *token
		t.OrganizationID = org.ID
		puts = append(puts, s.tokenPuts(&t)...)
		kinds = append(kinds, "token", "token hash")
	}
	err := s.runTx(ctx, func(tx *dynamo.WriteTx) {
		for _, p := range puts {
			tx.Put(p)
		}
	})
	if at := txFailedAt(err); at != nil {
		return kiln.Errorf(kiln.EConflict, "%s is already taken", kinds[at[0]])
	}
	return wrap("create organization", err)
}

func (s *Store) GetOrganization(ctx context.Context, id string) (*kiln.Organization, error) {
	return get(ctx, s, "get organization", "organization", orgPK(id), orgSK, (*orgItem).organization)
}

// UpdateOrganization sets the editable attributes on the existing item; slug and createdAt stay.
func (s *Store) UpdateOrganization(ctx context.Context, org *kiln.Organization) error {
	err := s.updateFields(ctx, orgPK(org.ID), orgSK, newOrgItem(org), orgMutable)
	if isCondFailed(err) {
		return kiln.NotFound("organization")
	}
	return wrap("update organization", err)
}

// SetPerforce sets (or, with nil, removes) the organization's perforce map and its updatedAt, on
// the condition that the organization exists, and returns the item as written.
func (s *Store) SetPerforce(ctx context.Context, orgID string, creds *kiln.PerforceCredentials, at time.Time) (*kiln.Organization, error) {
	u := s.table.Update(attrPK, orgPK(orgID)).Range(attrSK, orgSK).Set("updatedAt", toMS(at)).
		If("attribute_exists($)", attrPK)
	if creds != nil {
		u = u.Set("perforce", newPerforceAttr(creds))
	} else {
		u = u.Remove("perforce")
	}
	var it orgItem
	err := u.Value(ctx, &it)
	if isCondFailed(err) {
		return nil, kiln.NotFound("organization")
	}
	if err != nil {
		return nil, wrap("set Perforce credentials", err)
	}
	return it.organization(), nil
}
