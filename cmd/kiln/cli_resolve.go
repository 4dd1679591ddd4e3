package main

import (
	"context"
	"strings"

	"github.com/kilnbuild/kiln/shared/client"
)

// allProjects reads every project of the organization, page by page.
func allProjects(ctx context.Context, c *client.Client) ([]client.Project, error) {
	var all []client.Project
	for cursor := ""; ; {
		p, err := c.ListProjects(ctx, cursor)
		if err != nil {
			return nil, err
		}
		all = append(all, p.Items...)
		if p.NextCursor == nil {
			return all, nil
		}
		cursor = *p.NextCursor
	}
}

// resolveProject answers the id of the project named by arg: its id, or its name when exactly
// one project has that name.
func resolveProject(ctx context.Context, c *client.Client, arg string) (string, error) {
	all, err := allProjects(ctx, c)
	if err != nil {
		return "", err
	}
	return projectIn(all, arg)
}

// projectIn is resolveProject on projects already read.
func projectIn(all []client.Project, arg string) (string, error) {
	var named []string
	for _, pr := range all {
		if pr.ID == arg {
			return pr.ID, nil
		}
		if pr.Name == arg {
			named = append(named, pr.ID)
		}
	}
	switch len(named) {
	case 0:
		return "", usageErr("no project has the id or name %q", arg)
	case 1:
		return named[0], nil
	}
	return "", usageErr("%d projects are named %q; give one of their ids: %s", len(named), arg, strings.Join(named, ", "))
}

// namesOf maps project ids to their names, for tables.
func namesOf(all []client.Project) map[string]string {
	names := make(map[string]string, len(all))
	for _, pr := range all {
		names[pr.ID] = pr.Name
	}
	return names
}

// projectNames maps the organization's project ids to their names, for tables. It is best
// effort: projects that cannot be read leave the ids to be shown instead of names.
func projectNames(ctx context.Context, c *client.Client) map[string]string {
	all, _ := allProjects(ctx, c)
	return namesOf(all)
}
