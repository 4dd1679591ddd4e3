package main

import (
	"context"
	"strings"

	"github.com/kilnbuild/kiln/shared/client"
)

// resolveProject answers the id of the project named by arg: its id, or its name when exactly
// one project has that name.
func resolveProject(ctx context.Context, c *client.Client, arg string) (string, error) {
	var named []string
	cursor := ""
	for {
		p, err := c.ListProjects(ctx, cursor)
		if err != nil {
			return "", err
		}
		for _, pr := range p.Items {
			if pr.ID == arg {
				return pr.ID, nil
			}
			if pr.Name == arg {
				named = append(named, pr.ID)
			}
		}
		if p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
	}
	switch len(named) {
	case 0:
		return "", usageErr("no project has the id or name %q", arg)
	case 1:
		return named[0], nil
	}
	return "", usageErr("%d projects are named %q; give one of their ids: %s", len(named), arg, strings.Join(named, ", "))
}

// projectNames maps the organization's project ids to their names, for tables. It is best
// effort: a page that cannot be read leaves the ids to be shown instead of names.
func projectNames(ctx context.Context, c *client.Client) map[string]string {
	names := map[string]string{}
	cursor := ""
	for range 100 { // at most 100 pages
		p, err := c.ListProjects(ctx, cursor)
		if err != nil {
			return names
		}
		for _, pr := range p.Items {
			names[pr.ID] = pr.Name
		}
		if p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
	}
	return names
}
