package main

import (
	"context"
	"strconv"
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

// buildNumber reads a build argument that is a number in a project: "Shooter#2" (project
// "Shooter"), "#2" or "2" (no project). ok is false for anything else: a build id.
func buildNumber(arg string) (project string, number int64, ok bool, err error) {
	project, num, hasHash := strings.Cut(arg, "#")
	if !hasHash {
		project, num = "", arg
	}
	if num == "" || strings.Trim(num, "0123456789") != "" {
		if hasHash {
			return "", 0, false, usageErr("%q: after # comes a build's number (the # column of kiln builds list), as in Shooter#2", arg)
		}
		return "", 0, false, nil
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 {
		return "", 0, false, usageErr("%q: a build's number is 1 or more", arg)
	}
	return project, n, true, nil
}

// resolveBuild answers the id of the build that arg names for command (as in "kiln artifacts
// download"): a build id, or a build's number in a project: PROJECT#N, or N (or #N) with
// project (--project). A number without a project is an error that says how to give one.
func resolveBuild(ctx context.Context, c *client.Client, command, arg, project string) (string, error) {
	inArg, n, ok, err := buildNumber(arg)
	if err != nil || !ok {
		return arg, err
	}
	switch {
	case inArg != "" && project != "" && inArg != project:
		return "", usageErr("%s: give the project once: %s, or --project %s %d", command, arg, project, n)
	case inArg != "":
		project = inArg
	case project == "":
		return "", usageErr("%s: %q looks like a build's number (the # column of kiln builds list), which counts within a project; "+
			"say which project's: %s PROJECT#%d, or %s --project PROJECT %d (or give the build's id)", command, arg, command, n, command, n)
	}
	projects, err := allProjects(ctx, c)
	if err != nil {
		return "", err
	}
	projectID, err := projectIn(projects, project)
	if err != nil {
		return "", err
	}
	// Newest first, and numbers grow with time: after a page of smaller numbers only, N is not
	// in the older pages.
	for cursor := ""; ; {
		page, err := c.ListBuilds(ctx, client.BuildFilter{ProjectID: projectID, Limit: 100, Cursor: cursor})
		if err != nil {
			return "", err
		}
		older := len(page.Items) > 0
		for _, b := range page.Items {
			if b.Number != nil && *b.Number == n {
				return b.ID, nil
			}
			if b.Number == nil || *b.Number > n {
				older = false
			}
		}
		if page.NextCursor == nil || older {
			return "", usageErr("project %s has no build #%d (kiln builds list --project %s lists its builds)", project, n, project)
		}
		cursor = *page.NextCursor
	}
}
