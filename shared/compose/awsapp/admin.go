package awsapp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/compose/adminresult"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
	"github.com/kilnbuild/kiln/shared/store/dynamostore"
)

// AdminRequest is what an operator asks of the admin Lambda (aws lambda invoke) or of
// `kiln admin --dynamodb-table`, as `kiln admin` takes it on one machine:
//   - bootstrap: organization, email, name, plan (default enterprise; a hosted service passes
//     free): the deployment's first organization and its owner; refused once an organization
//     was bootstrapped, unless force is true;
//   - user: organizationId, email, name, role (default member): a member of an organization;
//   - token: organizationId, email: a new API token for a member (a lost owner token);
//   - plan: organizationId, plan, and for enterprise optionally maxConcurrentBuilds (0: the
//     plan's): changes an organization's plan.
type AdminRequest struct {
	Command        string `json:"command"`
	Organization   string `json:"organization,omitempty"`
	OrganizationID string `json:"organizationId,omitempty"`
	Email          string `json:"email,omitempty"`
	Name           string `json:"name,omitempty"`
	Role           string `json:"role,omitempty"`
	Force          bool   `json:"force,omitempty"`
	Plan           string `json:"plan,omitempty"`
	// MaxConcurrentBuilds is an enterprise organization's own limit of running builds.
	MaxConcurrentBuilds *int `json:"maxConcurrentBuilds,omitempty"`
}

// AdminStore is what the admin commands read and write.
type AdminStore interface {
	accounts.Store
	store.Members
	CreateToken(ctx context.Context, t *kiln.Token) error
	UseOnce(ctx context.Context, orgID, key string, now, expires time.Time) error
}

var _ AdminStore = store.Store(nil)

// Admin runs the admin commands on a store (DynamoDB in AWS).
type Admin struct {
	Store AdminStore
	Now   func() time.Time
}

// bootstrapKey is the once-key that records the deployment's first bootstrap.
const bootstrapKey = "admin-bootstrap"

// Handle is the admin Lambda's handler.
func (a *Admin) Handle(ctx context.Context, req AdminRequest) (adminresult.Result, error) {
	return a.Run(ctx, req)
}

// Run runs one command. Bad input is bad_request or validation_failed and changes nothing.
func (a *Admin) Run(ctx context.Context, req AdminRequest) (adminresult.Result, error) {
	now := kiln.Now(a.Now)
	missing := func(fields ...string) error {
		var names []string
		values := map[string]string{"organization": req.Organization, "organizationId": req.OrganizationID, "email": req.Email, "name": req.Name, "plan": req.Plan}
		for _, f := range fields {
			if strings.TrimSpace(values[f]) == "" {
				names = append(names, f)
			}
		}
		if len(names) > 0 {
			return kiln.Errorf(kiln.EBadRequest, "%s: %s required", req.Command, strings.Join(names, ", "))
		}
		return nil
	}
	switch req.Command {
	case "bootstrap":
		if err := missing("organization", "email", "name"); err != nil {
			return adminresult.Result{}, err
		}
		return a.bootstrap(ctx, req, now)
	case "user":
		if err := missing("organizationId", "email", "name"); err != nil {
			return adminresult.Result{}, err
		}
		role := kiln.Role(req.Role)
		if role == "" {
			role = kiln.RoleMember
		}
		created, err := accounts.AddMember(ctx, a.Store, req.OrganizationID, req.Email, req.Name, role, now)
		if err != nil {
			return adminresult.Result{}, err
		}
		return adminresult.Result{Token: created.Token, UserID: created.Member.User.ID}, nil
	case "token":
		if err := missing("organizationId", "email"); err != nil {
			return adminresult.Result{}, err
		}
		return a.token(ctx, req, now)
	case "plan":
		if err := missing("organizationId", "plan"); err != nil {
			return adminresult.Result{}, err
		}
		org, err := accounts.SetPlan(ctx, a.Store, req.OrganizationID, kiln.Plan(req.Plan), req.MaxConcurrentBuilds, now)
		if err != nil {
			return adminresult.Result{}, err
		}
		return adminresult.Plan(org), nil
	default:
		return adminresult.Result{}, kiln.Errorf(kiln.EBadRequest, "unknown command %q (want bootstrap, user, token or plan)", req.Command)
	}
}

// bootstrap creates an organization with its owner. The first bootstrap records a once-key, and
// a later one is refused (conflict) unless forced: an operator re-running the first step of the
// setup gets an error instead of a second organization. The input is checked before the key is
// recorded, so that a refused bootstrap does not count.
func (a *Admin) bootstrap(ctx context.Context, req AdminRequest, now time.Time) (adminresult.Result, error) {
	plan := kiln.Plan(req.Plan)
	if plan == "" {
		plan = kiln.PlanEnterprise
	}
	org := &kiln.Organization{Name: strings.TrimSpace(req.Organization), Plan: plan}
	owner := &kiln.Member{Role: kiln.RoleOwner, User: kiln.User{Email: strings.TrimSpace(req.Email), Name: strings.TrimSpace(req.Name)}}
	if err := org.Validate(); err != nil {
		return adminresult.Result{}, err
	}
	if err := owner.Validate(); err != nil {
		return adminresult.Result{}, err
	}
	err := a.Store.UseOnce(ctx, "", bootstrapKey, now, now.AddDate(1000, 0, 0))
	switch {
	case kiln.IsCode(err, kiln.EConflict) && !req.Force:
		return adminresult.Result{}, kiln.Errorf(kiln.EConflict, "an organization was bootstrapped already: add members with the user "+
			"command, issue a lost token with the token command, or set force to make another organization")
	case err != nil && !kiln.IsCode(err, kiln.EConflict):
		return adminresult.Result{}, fmt.Errorf("bootstrap: %w", err)
	}
	created, err := accounts.CreateOrganization(ctx, a.Store, accounts.NewOrganization{
		Name: req.Organization, OwnerEmail: req.Email, OwnerName: req.Name, Plan: plan,
	}, now)
	if err != nil {
		return adminresult.Result{}, fmt.Errorf("%w (the bootstrap was recorded: set force to try again)", err)
	}
	return adminresult.Result{Token: created.Token, OrganizationID: created.Organization.ID, UserID: created.Member.User.ID}, nil
}

// token issues a new API token for a member found by email.
func (a *Admin) token(ctx context.Context, req AdminRequest, now time.Time) (adminresult.Result, error) {
	org, err := a.Store.GetOrganization(ctx, req.OrganizationID)
	if err != nil {
		return adminresult.Result{}, fmt.Errorf("organization %s: %w", req.OrganizationID, err)
	}
	want := kiln.NormalizeEmail(req.Email)
	page := store.Page{Limit: store.MaxLimit}
	for {
		members, next, err := a.Store.ListMembers(ctx, org.ID, page)
		if err != nil {
			return adminresult.Result{}, fmt.Errorf("list members: %w", err)
		}
		for _, m := range members {
			if kiln.NormalizeEmail(m.User.Email) != want {
				continue
			}
			secret, tok := auth.NewToken(org.ID, m.User.ID, "admin token "+now.UTC().Format(time.DateOnly), now, 0)
			if err := a.Store.CreateToken(ctx, tok); err != nil {
				return adminresult.Result{}, fmt.Errorf("issue token: %w", err)
			}
			return adminresult.Result{Token: secret, OrganizationID: org.ID, UserID: m.User.ID}, nil
		}
		if next == "" {
			return adminresult.Result{}, kiln.Errorf(kiln.ENotFound, "no member with email %s in organization %s", req.Email, org.ID)
		}
		page.After = next
	}
}

// NewDynamoAdmin runs the admin commands on a DynamoDB table, with the AWS SDK's settings from
// the environment (AWS_REGION, credentials, AWS_ENDPOINT_URL_DYNAMODB). The commands need no
// master key: tokens are kept as hashes.
func NewDynamoAdmin(ctx context.Context, table string) (*Admin, error) {
	if table == "" {
		return nil, errors.New("KILN_DYNAMODB_TABLE is not set")
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	return &Admin{Store: dynamostore.New(dynamo.New(awsCfg), table)}, nil
}
