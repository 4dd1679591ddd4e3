package app

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// AdminBootstrap creates an organization with an owner in the state under dataDir and prints one
// JSON line {"token", "organizationId", "userId"}. It works while `kiln serve` runs on the same
// directory.
func AdminBootstrap(ctx context.Context, dataDir, orgName, email, name string, out io.Writer) error {
	local, err := OpenLocal(ctx, dataDir)
	if err != nil {
		return err
	}
	defer local.Close()
	created, err := accounts.CreateOrganization(ctx, local.Store, accounts.NewOrganization{
		Name: orgName, OwnerEmail: email, OwnerName: name,
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

// AdminAddUser adds a member with a role to an existing organization and prints one JSON line
// {"token", "userId"}.
func AdminAddUser(ctx context.Context, dataDir, orgID, email, name, role string, out io.Writer) error {
	local, err := OpenLocal(ctx, dataDir)
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
