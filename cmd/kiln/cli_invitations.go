package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/kilnbuild/kiln/shared/client"
)

// invitations runs kiln invitations create|list|revoke.
func invitations(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	const commands = "create, list or revoke"
	if len(args) == 0 {
		return errNoSuchCommand("invitations", args, commands)
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		return groupHelp(stdout, "invitations")
	}
	fs := flag.NewFlagSet("kiln invitations "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	var want int
	switch args[0] {
	case "list":
	case "create":
		want = 2
	case "revoke":
		want = 1
	default:
		return errNoSuchCommand("invitations", args, commands)
	}
	pos, err := parseArgs(fs, args[1:], want)
	if err != nil {
		return err
	}
	c, err := apiClient(getenv)
	if err != nil {
		return err
	}
	me, err := c.Me(ctx)
	if err != nil {
		return err
	}
	org := me.Organization.ID
	switch args[0] {
	case "create":
		inv, err := c.Invite(ctx, org, pos[0], pos[1])
		if err != nil {
			return err
		}
		if *asJSON {
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
		if *asJSON {
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
