package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/client"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// settingsCmd runs kiln settings list.
func settingsCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errNoSuchCommand("settings", args, "list")
	}
	switch args[0] {
	case "list":
		fs := flag.NewFlagSet("kiln settings list", flag.ContinueOnError)
		fs.SetOutput(stderr)
		asJSON := fs.Bool("json", false, "print JSON instead of a table")
		project := fs.String("project", "", "only this project's settings (its id or name)")
		if _, err := parseArgs(fs, args[1:], 0); err != nil {
			return err
		}
		c, err := apiClient(getenv)
		if err != nil {
			return err
		}
		list, err := listSettings(ctx, c, *project)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, map[string]any{"items": list})
		}
		return printSettings(stdout, list, time.Now())
	case "help", "-h", "--help":
		return groupHelp(stdout, "settings")
	}
	return errNoSuchCommand("settings", args, "list")
}

// namedSetting is a build setting with its project and readable name, and its latest build.
type namedSetting struct {
	client.BuildSetting
	Project   string        `json:"project"`
	Name      string        `json:"name"`
	LastBuild *client.Build `json:"lastBuild"`
}

// listSettings lists the settings of the project named project, or of every project ("").
func listSettings(ctx context.Context, c *client.Client, project string) ([]namedSetting, error) {
	projects, err := projectsOf(ctx, c, project)
	if err != nil {
		return nil, err
	}
	var out []namedSetting
	for _, p := range projects {
		settings, err := c.ListBuildSettings(ctx, p.ID)
		if err != nil {
			return nil, err
		}
		names := kiln.SettingNames(asKilnSettings(settings))
		for _, s := range settings {
			ns := namedSetting{BuildSetting: s, Project: p.Name, Name: names[s.ID]}
			last, err := c.ListBuilds(ctx, client.BuildFilter{BuildSettingID: s.ID, Limit: 1})
			if err != nil {
				return nil, err
			}
			if len(last.Items) > 0 {
				ns.LastBuild = &last.Items[0]
			}
			out = append(out, ns)
		}
	}
	return out, nil
}

// projectsOf is the project named project (its id or name), or every project for "".
func projectsOf(ctx context.Context, c *client.Client, project string) ([]client.Project, error) {
	all, err := allProjects(ctx, c)
	if err != nil || project == "" {
		return all, err
	}
	id, err := projectIn(all, project)
	if err != nil {
		return nil, err
	}
	for _, p := range all {
		if p.ID == id {
			return []client.Project{p}, nil
		}
	}
	return nil, usageErr("no project has the id or name %q", project)
}

// asKilnSettings are the settings as far as their names need them.
func asKilnSettings(settings []client.BuildSetting) []*kiln.BuildSetting {
	out := make([]*kiln.BuildSetting, len(settings))
	for i, s := range settings {
		out[i] = &kiln.BuildSetting{ID: s.ID, Platform: kiln.Platform(s.Platform), BuildType: kiln.BuildType(s.BuildType),
			Branch: deref(s.Branch), StreamPath: deref(s.StreamPath)}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// printSettings writes settings as a table; the latest build's time is relative to now, as in
// the builds list.
func printSettings(w io.Writer, list []namedSetting, now time.Time) error {
	rows := make([][]string, 0, len(list))
	for _, s := range list {
		trigger := s.Trigger
		if s.Schedule != nil {
			trigger += " (" + *s.Schedule + " UTC)"
		}
		last := "-"
		if b := s.LastBuild; b != nil {
			last = fmt.Sprintf("%s %s %s", buildName(b.ID, b.Number), b.Status, ago(b.CreatedAt, now))
		}
		engine := "UE (from the .uproject)"
		if s.UEVersion != nil {
			engine = "UE " + *s.UEVersion
		}
		rows = append(rows, []string{s.ID, s.Project, s.Name, s.Ref(), engine, trigger, last})
	}
	return printTable(w, []string{"ID", "PROJECT", "NAME", "BRANCH/STREAM", "ENGINE", "TRIGGER", "LAST BUILD"}, rows)
}

// settingOf is the project named project and setting, when the project has a build setting of
// that id or name; one it has not is an error listing the names it has. (The API resolves the
// name again, and says which settings a name shared by several means.)
func settingOf(ctx context.Context, c *client.Client, project, setting string) (projectID, ref string, err error) {
	projects, err := projectsOf(ctx, c, project)
	if err != nil {
		return "", "", err
	}
	p := projects[0]
	settings, err := c.ListBuildSettings(ctx, p.ID)
	if err != nil {
		return "", "", err
	}
	ks := asKilnSettings(settings)
	if _, err := kiln.ResolveSetting(ks, setting); !kiln.IsCode(err, kiln.ENotFound) {
		return p.ID, setting, nil
	}
	if len(ks) == 0 {
		return "", "", usageErr("project %s has no build settings yet; add one in the console (Projects) or with POST /projects/%s/build-settings", p.Name, p.ID)
	}
	names := kiln.SettingNames(ks)
	list := make([]string, 0, len(ks))
	for _, s := range ks {
		list = append(list, names[s.ID])
	}
	sort.Strings(list)
	return "", "", usageErr("project %s has no build setting %q; its settings: %s (kiln settings list --project %s shows them)",
		p.Name, setting, strings.Join(list, ", "), p.Name)
}

// triggerTarget is the project and the setting kiln builds trigger builds: PROJECT SETTING, or
// SETTING alone (its id or readable name) with --project, or found in whichever project has it.
// The API resolves a name within a project; across projects it must name one setting, else
// the error lists the candidates and asks for --project.
func triggerTarget(ctx context.Context, c *client.Client, pos []string, project string) (projectID, setting string, err error) {
	setting = pos[len(pos)-1]
	if len(pos) == 2 {
		if project != "" {
			return "", "", usageErr("kiln builds trigger: give the project once: as an argument or with --project")
		}
		project = pos[0]
	}
	if project != "" {
		return settingOf(ctx, c, project, setting)
	}
	projects, err := projectsOf(ctx, c, "")
	if err != nil {
		return "", "", err
	}
	type found struct{ project, id, name string }
	var matches []found
	for _, p := range projects {
		settings, err := c.ListBuildSettings(ctx, p.ID)
		if err != nil {
			return "", "", err
		}
		ks := asKilnSettings(settings)
		s, err := kiln.ResolveSetting(ks, setting)
		switch {
		case kiln.IsCode(err, kiln.ENotFound):
			continue
		case err != nil:
			return "", "", usageErr("project %s: %v", p.Name, err)
		}
		matches = append(matches, found{p.ID, s.ID, p.Name + ": " + kiln.SettingNames(ks)[s.ID] + " (" + s.ID + ")"})
	}
	switch len(matches) {
	case 0:
		return "", "", usageErr("no build setting has the id or name %q (kiln settings list shows them)", setting)
	case 1:
		return matches[0].project, matches[0].id, nil
	}
	var list []string
	for _, m := range matches {
		list = append(list, m.name)
	}
	return "", "", usageErr("%q names build settings of %d projects; give --project, or an id: %s", setting, len(matches), strings.Join(list, "; "))
}
