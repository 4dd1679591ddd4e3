package main

import (
	"context"
	"fmt"
	"io"

	"github.com/kilnbuild/kiln/shared/client"
)

// invitations runs kiln invitations create|list|revoke.
func invitations(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd, err := startOrgCommand(ctx, "invitations", "create, list or revoke",
		map[string]int{"list": 0, "create": 2, "revoke": 1}, args, getenv, stdout, stderr)
	if cmd == nil {
		return err
	}
	c, me, pos, asJSON := cmd.c, cmd.me, cmd.pos, cmd.asJSON
	org := me.Organization.ID
	switch cmd.name {
	case "create":
		inv, err := c.Invite(ctx, org, pos[0], pos[1])
		if err != nil {
			return err
		}
		if asJSON {
			return printJSON(stdout, inv)
		}
		fmt.Fprintf(stdout, "invited %s to %s as %s, until %s\n", inv.Email, me.Organization.Name, inv.Role, inv.ExpiresAt)
		if inv.Mailed != nil && *inv.Mailed {
			fmt.Fprintln(stdout, "the link was mailed to them; it is shown here this once:")
		} else {
			fmt.Fprintln(stdout, "pass them this link (it works once and is shown this once):")
		}
		fmt.Fprintln(stdout, inv.Link)
		return nil
	case "list":
		all, err := c.Invitations(ctx, org)
		if err != nil {
			return err
		}
		if asJSON {
			return printJSON(stdout, all)
		}
		return printInvitations(stdout, all)
	default: // revoke
		if err := c.RevokeInvitation(ctx, org, pos[0]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked invitation %s; its link no longer works\n", pos[0])
		return nil
	}
}

func printInvitations(w io.Writer, all []client.Invitation) error {
	rows := make([][]string, 0, len(all))
	for _, inv := range all {
		rows = append(rows, []string{inv.ID, inv.Email, inv.Role, inv.InvitedBy.Name, inv.ExpiresAt})
	}
	return printTable(w, []string{"ID", "EMAIL", "ROLE", "INVITED BY", "EXPIRES"}, rows)
}
