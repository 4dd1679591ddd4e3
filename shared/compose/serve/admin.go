package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/compose/adminresult"
	"github.com/kilnbuild/kiln/shared/compose/onemachine"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// openExisting opens the state of a data directory that `kiln serve` made. A directory that does
// not exist is refused rather than created: a mistyped path says so instead of "not found".
func openExisting(ctx context.Context, dataDir string) (*Local, error) {
	fi, err := os.Stat(dataDir)
	if err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("data directory %s does not exist: give the one kiln serve uses (--data or KILN_DATA)", dataDir)
	}
	return OpenLocal(ctx, dataDir)
}

// AdminBootstrap creates an organization on plan (empty: enterprise) with an owner in the state
// under dataDir and prints one JSON line {"token", "organizationId", "userId"}. It works while
// `kiln serve` runs on the same directory.
func AdminBootstrap(ctx context.Context, dataDir, orgName, email, name, plan string, out io.Writer) error {
	local, err := openExisting(ctx, dataDir)
	if err != nil {
		return err
	}
	defer local.Close()
	created, err := accounts.CreateOrganization(ctx, local.Store, accounts.NewOrganization{
		Name: orgName, OwnerEmail: email, OwnerName: name, Plan: kiln.Plan(plan),
	}, time.Now())
	if err != nil {
		return err
	}
	return json.NewEncoder(out).Encode(map[string]string{
		"token":          created.Token,
		"organizationId": created.Organization.ID,
		"userId":         created.Member.User.ID,
	})
}

// AdminPlan changes an organization's plan and, for enterprise, with maxConcurrent not nil its
// own limit of running builds, and prints one JSON line {"organizationId", "plan",
// "maxConcurrentBuilds"}.
func AdminPlan(ctx context.Context, dataDir, orgID, plan string, maxConcurrent *int, out io.Writer) error {
	local, err := openExisting(ctx, dataDir)
	if err != nil {
		return err
	}
	defer local.Close()
	org, err := accounts.SetPlan(ctx, local.Store, orgID, kiln.Plan(plan), maxConcurrent, time.Now())
	if err != nil {
		return err
	}
	return json.NewEncoder(out).Encode(adminresult.Plan(org))
}

// AdminAddUser adds a member with a role to an existing organization and prints one JSON line
// {"token", "userId"}.
func AdminAddUser(ctx context.Context, dataDir, orgID, email, name, role string, out io.Writer) error {
	local, err := openExisting(ctx, dataDir)
	if err != nil {
		return err
	}
	defer local.Close()
	created, err := accounts.AddMember(ctx, local.Store, orgID, email, name, kiln.Role(role), time.Now())
	if err != nil {
		return err
	}
	return json.NewEncoder(out).Encode(map[string]string{
		"token":  created.Token,
		"userId": created.Member.User.ID,
	})
}

// AdminToken issues a new API token for an existing member (a lost owner token) and prints one
// JSON line {"token", "organizationId", "userId"}; the token is shown only then. Without orgID
// it is the "Local" organization that `kiln serve` made on its first start.
func AdminToken(ctx context.Context, dataDir, orgID, email string, out io.Writer) error {
	local, err := openExisting(ctx, dataDir)
	if err != nil {
		return err
	}
	defer local.Close()
	if orgID == "" {
		if orgID = onemachine.LocalOrganizationID(dataDir); orgID == "" {
			return fmt.Errorf("--org-id is required: %s has no Local organization on record", dataDir)
		}
	}
	org, err := local.Store.GetOrganization(ctx, orgID)
	if err != nil {
		return fmt.Errorf("organization %s: %w", orgID, err)
	}
	m, err := findMember(ctx, local.Store, org.ID, email)
	if err != nil {
		return err
	}
	secret, tok := auth.NewToken(org.ID, m.User.ID, "admin token "+time.Now().UTC().Format(time.DateOnly), time.Now(), 0)
	if err := local.Store.CreateToken(ctx, tok); err != nil {
		return fmt.Errorf("issue token: %w", err)
	}
	return json.NewEncoder(out).Encode(map[string]string{
		"token":          secret,
		"organizationId": org.ID,
		"userId":         m.User.ID,
	})
}

// findMember finds an organization's member by email (compared case-insensitively).
func findMember(ctx context.Context, s store.Members, orgID, email string) (*kiln.Member, error) {
	want := kiln.NormalizeEmail(email)
	page := store.Page{Limit: store.MaxLimit}
	for {
		members, next, err := s.ListMembers(ctx, orgID, page)
		if err != nil {
			return nil, fmt.Errorf("list members: %w", err)
		}
		for _, m := range members {
			if kiln.NormalizeEmail(m.User.Email) == want {
				return m, nil
			}
		}
		if next == "" {
			return nil, kiln.Errorf(kiln.ENotFound, "no member with email %s in organization %s", email, orgID)
		}
		page.After = next
	}
}
