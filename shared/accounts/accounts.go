// Package accounts creates organizations and their members, each with a first API token. Both
// `kiln serve` (the "Local" organization on first start) and `kiln admin` use it.
package accounts

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// Store is what accounts needs from the store.
type Store interface {
	CreateOrganization(ctx context.Context, org *kiln.Organization, owner *kiln.Member, token *kiln.Token) error
	GetOrganization(ctx context.Context, id string) (*kiln.Organization, error)
	CreateMember(ctx context.Context, m *kiln.Member, token *kiln.Token) error
	UpdateOrganization(ctx context.Context, org *kiln.Organization) error
	RecordAudit(ctx context.Context, e *kiln.AuditEvent) error
}

// NewOrganization describes an organization to create with its first owner.
type NewOrganization struct {
	Name       string
	Slug       string // optional; made from Name when empty
	OwnerEmail string
	OwnerName  string
	// Plan is the organization's plan; empty is enterprise (no limits: a self-hosted studio is
	// not limited by its own service).
	Plan kiln.Plan
}

// Created is a new member with the secret of its first token, which is shown once.
type Created struct {
	Organization *kiln.Organization
	Member       *kiln.Member
	Token        string
}

// maxSlugAttempts bounds how many suffixes are tried when a slug is taken.
const maxSlugAttempts = 20

// CreateOrganization creates an organization, its owner and the owner's token in one write. When
// the slug is taken and was not asked for explicitly, it tries name-2, name-3, ...
func CreateOrganization(ctx context.Context, s Store, in NewOrganization, now time.Time) (*Created, error) {
	now = now.UTC().Truncate(time.Millisecond)
	org := &kiln.Organization{
		ID: kiln.NewID(), Name: strings.TrimSpace(in.Name), Plan: cmpOr(in.Plan, kiln.PlanEnterprise),
		CreatedAt: now, UpdatedAt: now,
	}
	owner := &kiln.Member{
		OrganizationID: org.ID, Role: kiln.RoleOwner, CreatedAt: now,
		User: kiln.User{ID: kiln.NewID(), Email: strings.TrimSpace(in.OwnerEmail), Name: strings.TrimSpace(in.OwnerName), CreatedAt: now},
	}
	errs := kiln.FieldErrors{}
	if err := org.Validate(); err != nil {
		mergeFields(errs, err, "org")
	}
	if err := owner.Validate(); err != nil {
		mergeFields(errs, err, "")
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	secret, tok := auth.NewToken(org.ID, owner.User.ID, "bootstrap", now, 0)
	if err := createWithFreeSlug(ctx, s, org, owner, tok, in.Slug); err != nil {
		return nil, err
	}
	return &Created{Organization: org, Member: owner, Token: secret}, nil
}

// CreateOwnedOrganization creates an organization on plan whose owner is an existing user who
// signed in (a self-service organization): no token is made, the user's console session acts
// for it. The slug is made from the name, with a suffix when taken.
func CreateOwnedOrganization(ctx context.Context, s Store, name string, user kiln.User, plan kiln.Plan, now time.Time) (*kiln.Organization, error) {
	now = now.UTC().Truncate(time.Millisecond)
	org := &kiln.Organization{ID: kiln.NewID(), Name: strings.TrimSpace(name), Plan: plan, CreatedAt: now, UpdatedAt: now}
	owner := &kiln.Member{OrganizationID: org.ID, Role: kiln.RoleOwner, CreatedAt: now, User: user}
	if err := org.Validate(); err != nil {
		return nil, err
	}
	if err := createWithFreeSlug(ctx, s, org, owner, nil, ""); err != nil {
		return nil, err
	}
	return org, nil
}

// createWithFreeSlug stores org with its owner (and the owner's token, if any). When the slug is
// taken and was not asked for explicitly (asked is ""), it tries name-2, name-3, ...
func createWithFreeSlug(ctx context.Context, s Store, org *kiln.Organization, owner *kiln.Member, tok *kiln.Token, asked string) error {
	base := asked
	if base == "" {
		base = kiln.Slugify(org.Name)
	}
	for i := 1; i <= maxSlugAttempts; i++ {
		org.Slug = base
		if i > 1 {
			org.Slug = base + "-" + strconv.Itoa(i)
		}
		err := s.CreateOrganization(ctx, org, owner, tok)
		if err == nil {
			return nil
		}
		if !kiln.IsCode(err, kiln.EConflict) || asked != "" {
			return fmt.Errorf("create organization: %w", err)
		}
	}
	return kiln.Errorf(kiln.EConflict, "no free slug for %q", org.Name)
}

// AddMember adds a user with a role to an existing organization, with a first token.
func AddMember(ctx context.Context, s Store, orgID, email, name string, role kiln.Role, now time.Time) (*Created, error) {
	now = now.UTC().Truncate(time.Millisecond)
	org, err := s.GetOrganization(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("add member: %w", err)
	}
	m, secret, tok := NewMember(org.ID, email, name, role, now)
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if err := s.CreateMember(ctx, m, tok); err != nil {
		return nil, fmt.Errorf("add member: %w", err)
	}
	if err := recordOperatorChange(ctx, s, org.ID, "member.added", m.User.ID, now,
		map[string]string{"member": m.User.Email, "role": string(m.Role)}); err != nil {
		return nil, err
	}
	return &Created{Organization: org, Member: m, Token: secret}, nil
}

// NewMember builds (without storing or validating) a member of the organization and their first
// token: the token's secret, to show once, and its record.
func NewMember(orgID, email, name string, role kiln.Role, now time.Time) (*kiln.Member, string, *kiln.Token) {
	now = now.UTC().Truncate(time.Millisecond)
	m := &kiln.Member{
		OrganizationID: orgID, Role: role, CreatedAt: now,
		User: kiln.User{ID: kiln.NewID(), Email: strings.TrimSpace(email), Name: strings.TrimSpace(name), CreatedAt: now},
	}
	secret, tok := auth.NewToken(orgID, m.User.ID, "first", now, 0)
	return m, secret, tok
}

// mergeFields copies a validation error's fields into errs, renaming "name" to prefix+"Name".
func mergeFields(errs kiln.FieldErrors, err error, prefix string) {
	var ke *kiln.Error
	if e, ok := err.(*kiln.Error); ok {
		ke = e
	}
	if ke == nil {
		errs.Add("_", err.Error())
		return
	}
	for f, p := range ke.Fields {
		if prefix != "" && f == "name" {
			f = prefix + "Name"
		}
		errs.Add(f, p)
	}
}

// recordOperatorChange puts a change made by the service's operator (kiln admin, the admin
// Lambda) in the organization's audit log.
func recordOperatorChange(ctx context.Context, s Store, orgID, kind, target string, now time.Time, details map[string]string) error {
	e := &kiln.AuditEvent{ID: kiln.NewID(), OrganizationID: orgID, At: now.UTC().Truncate(time.Millisecond), Kind: kind,
		ActorKind: kiln.AuditActorOperator, ActorName: "operator", Target: target, Details: details}
	if err := s.RecordAudit(ctx, e); err != nil {
		return fmt.Errorf("record %s in the audit log: %w", kind, err)
	}
	return nil
}
