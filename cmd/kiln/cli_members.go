package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/kilnbuild/kiln/shared/client"
)

// members runs kiln members list|role|remove|leave.
func members(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd, err := startOrgCommand(ctx, "members", "list, role, remove or leave",
		map[string]int{"list": 0, "leave": 0, "role": 2, "remove": 1}, args, getenv, stdout, stderr)
	if cmd == nil {
		return err
	}
	c, me, pos, asJSON := cmd.c, cmd.me, cmd.pos, cmd.asJSON
	org := me.Organization.ID
	switch cmd.name {
	case "list":
		all, err := c.Members(ctx, org)
		if err != nil {
			return err
		}
		if asJSON {
			return printJSON(stdout, all)
		}
		return printMembers(stdout, all)
	case "role":
		id, err := resolveMember(ctx, c, org, pos[0])
		if err != nil {
			return err
		}
		m, err := c.SetMemberRole(ctx, org, id, pos[1])
		if err != nil {
			return err
		}
		if asJSON {
			return printJSON(stdout, m)
		}
		fmt.Fprintf(stdout, "%s <%s> is now %s\n", m.User.Name, m.User.Email, m.Role)
		return nil
	case "remove":
		id, err := resolveMember(ctx, c, org, pos[0])
		if err != nil {
			return err
		}
		if err := c.RemoveMember(ctx, org, id); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed %s from %s; their tokens were revoked\n", pos[0], me.Organization.Name)
		return nil
	default: // leave
		if err := c.Leave(ctx, org); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "you left %s; your tokens for it no longer work\n", me.Organization.Name)
		return nil
	}
}

// resolveMember answers the user id of the member arg names: their id or their email (any case).
func resolveMember(ctx context.Context, c *client.Client, orgID, arg string) (string, error) {
	all, err := c.Members(ctx, orgID)
	if err != nil {
		return "", err
	}
	for _, m := range all {
		if m.User.ID == arg || strings.EqualFold(m.User.Email, arg) {
			return m.User.ID, nil
		}
	}
	return "", usageErr("no member has the id or email %q (kiln members list shows them)", arg)
}

func printMembers(w io.Writer, ms []client.Member) error {
	rows := make([][]string, 0, len(ms))
	for _, m := range ms {
		rows = append(rows, []string{m.User.ID, m.User.Name, m.User.Email, m.Role, m.CreatedAt})
	}
	return printTable(w, []string{"ID", "NAME", "EMAIL", "ROLE", "SINCE"}, rows)
}
