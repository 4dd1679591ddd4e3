package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/kilnbuild/kiln/shared/client"
)

// builds runs kiln builds list|trigger|rerun|logs|cancel.
func builds(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	const commands = "list, trigger, rerun, logs or cancel"
	if len(args) == 0 {
		return errNoSuchCommand("builds", args, commands)
	}
	fs := flag.NewFlagSet("kiln builds "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	switch args[0] {
	case "list":
		project := fs.String("project", "", "only this project's builds (its id or name)")
		setting := fs.String("setting", "", "only this build setting's builds (its id)")
		status := fs.String("status", "", "only builds with this status (pending, running, complete, failed, superseded)")
		limit := fs.Int("limit", 25, "at most this many builds, newest first (1 to 100)")
		if _, err := parseArgs(fs, args[1:], 0); err != nil {
			return err
		}
		c, err := apiClient(getenv)
		if err != nil {
			return err
		}
		// The projects are read once: to resolve --project, and for the table's names (best
		// effort: without them the table shows ids).
		var projects []client.Project
		if *project != "" || !*asJSON {
			all, err := allProjects(ctx, c)
			if err != nil && *project != "" {
				return err
			}
			projects = all
		}
		if *project != "" {
			if *project, err = projectIn(projects, *project); err != nil {
				return err
			}
		}
		page, err := c.ListBuilds(ctx, client.BuildFilter{ProjectID: *project, BuildSettingID: *setting, Status: *status, Limit: *limit})
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, page)
		}
		return printBuilds(stdout, page.Items, namesOf(projects), time.Now())
	case "trigger":
		var o client.TriggerOptions
		fs.StringVar(&o.Branch, "branch", "", "build this branch instead of the setting's (GitHub projects)")
		fs.StringVar(&o.Commit, "commit", "", "build this commit of the branch (GitHub projects)")
		fs.StringVar(&o.Changelist, "changelist", "", "build this changelist (Perforce projects)")
		fs.BoolVar(&o.Clean, "clean", false, "a clean build: ignore the build cache (compiled objects, derived data) and replace it")
		follow := fs.Bool("follow", false, "stream the build's log and exit when it ends: 0 complete, 1 failed")
		project := fs.String("project", "", "the setting's project (its id or name), where SETTING alone is not enough")
		pos, err := parseArgsBetween(fs, args[1:], 1, 2)
		if err != nil {
			return err
		}
		c, err := apiClient(getenv)
		if err != nil {
			return err
		}
		projectID, setting, err := triggerTarget(ctx, c, pos, *project)
		if err != nil {
			return err
		}
		t, err := c.Trigger(ctx, projectID, setting, o)
		if err != nil {
			return err
		}
		if *asJSON {
			if err := printJSON(stdout, t); err != nil {
				return err
			}
		} else if *follow {
			fmt.Fprintf(stderr, "build %s queued\n", buildName(t.BuildID, t.Number))
		} else {
			fmt.Fprintln(stdout, t.BuildID)
		}
		if !*follow {
			return nil
		}
		return followBuild(ctx, c, t.BuildID, *asJSON, stdout, stderr)
	case "rerun":
		return rerunBuild(ctx, fs, args[1:], asJSON, getenv, stdout, stderr)
	case "logs":
		follow := fs.Bool("follow", false, "keep streaming until the build ends, then exit 0 complete, 1 failed")
		project := projectOfNumber(fs)
		pos, err := parseArgs(fs, args[1:], 1)
		if err != nil {
			return err
		}
		c, err := apiClient(getenv)
		if err != nil {
			return err
		}
		id, err := resolveBuild(ctx, c, "kiln builds logs", pos[0], *project)
		if err != nil {
			return err
		}
		if *follow {
			return followBuild(ctx, c, id, *asJSON, stdout, stderr)
		}
		_, err = c.Logs(ctx, id, false, logPrinter(stdout, *asJSON))
		return err
	case "cancel":
		project := projectOfNumber(fs)
		pos, err := parseArgs(fs, args[1:], 1)
		if err != nil {
			return err
		}
		c, err := apiClient(getenv)
		if err != nil {
			return err
		}
		id, err := resolveBuild(ctx, c, "kiln builds cancel", pos[0], *project)
		if err != nil {
			return err
		}
		b, err := c.Cancel(ctx, id)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, b)
		}
		return printBuilds(stdout, []client.Build{b.Build}, projectNames(ctx, c), time.Now())
	case "help", "-h", "--help":
		return groupHelp(stdout, "builds")
	}
	return errNoSuchCommand("builds", args, commands)
}

// projectOfNumber is the --project flag of the commands that take a BUILD: the project of a
// build given by its number.
func projectOfNumber(fs *flag.FlagSet) *string {
	return fs.String("project", "", "the project of a BUILD given by its number (the # column of kiln builds list)")
}

// followBuild streams a build's log until it ends, then reports how it ended: nil when it
// completed, a failure (exit status 1) with the reason when not.
// On a terminal, standard error shows the build's stage and time left meanwhile (stageLine).
func followBuild(ctx context.Context, c *client.Client, id string, asJSON bool, stdout, stderr io.Writer) error {
	line := newStageLine(stderr)
	watching, stopWatching := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); line.watch(watching, c, id) }()
	printLine := logPrinter(stdout, asJSON)
	// Over the live events where the server offers them, else long-polled: the same lines.
	_, err := c.Follow(ctx, id, func(l client.LogLine) error { return line.around(func() error { return printLine(l) }) })
	stopWatching()
	<-done
	line.end()
	if err != nil {
		return err
	}
	b, err := c.GetBuild(ctx, id)
	if err != nil {
		return err
	}
	if asJSON {
		if err := printJSON(stdout, b.Build); err != nil {
			return err
		}
	}
	switch b.Status {
	case "complete":
		if !asJSON {
			fmt.Fprintf(stderr, "build %s complete%s, started %s\n", buildName(id, b.Number), took(&b.Build), b.Cache)
		}
		return nil
	case "superseded":
		return &failure{fmt.Sprintf("build %s was superseded by a newer build of the same branch, platform and build type", buildName(id, b.Number))}
	}
	return &failure{fmt.Sprintf("build %s %s: %s", buildName(id, b.Number), b.Status, orDash(b.FailureReason))}
}

// buildName names a build in messages: "#<number> (<id>)", or its id when it has no number.
func buildName(id string, number *int64) string {
	if number == nil {
		return id
	}
	return fmt.Sprintf("#%d (%s)", *number, id)
}

// logPrinter prints log lines: their messages, or one JSON object per line.
func logPrinter(w io.Writer, asJSON bool) func(client.LogLine) error {
	return func(l client.LogLine) error {
		if asJSON {
			return printJSON(w, l)
		}
		_, err := fmt.Fprintln(w, l.Message)
		return err
	}
}

// printBuilds writes builds as a table: the newest first, each with its number in its project,
// the project's name (its id when names is missing it) and how long ago it was created.
func printBuilds(w io.Writer, bs []client.Build, names map[string]string, now time.Time) error {
	rows := make([][]string, 0, len(bs))
	for _, b := range bs {
		commit := orDash(b.Commit)
		if b.Changelist != nil {
			commit = *b.Changelist
		} else if len(commit) > 12 {
			commit = commit[:12]
		}
		num := "-"
		if b.Number != nil {
			num = strconv.FormatInt(*b.Number, 10)
		}
		project := names[b.ProjectID]
		if project == "" {
			project = b.ProjectID
		}
		rows = append(rows, []string{num, project, b.ID, b.Status, b.Platform, b.BuildType, b.Branch, commit, ago(b.CreatedAt, now), duration(b), b.Trigger.String(), reason(b)})
	}
	return printTable(w, []string{"#", "PROJECT", "ID", "STATUS", "PLATFORM", "TYPE", "BRANCH", "COMMIT", "CREATED", "DURATION", "BY", "REASON"}, rows)
}

// ago says how long before now an API time was ("3 minutes ago"); a time it cannot read is shown
// as it is.
func ago(at string, now time.Time) string {
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return orDash(&at)
	}
	return humanize.RelTime(t, now, "ago", "from now")
}

func duration(b client.Build) string {
	if b.DurationMs == nil {
		return "-"
	}
	return (time.Duration(*b.DurationMs) * time.Millisecond).Round(time.Second).String()
}

func took(b *client.Build) string {
	if b.DurationMs == nil {
		return ""
	}
	return " in " + duration(*b)
}

// reason is the failure reason on one line.
func reason(b client.Build) string {
	r := orDash(b.FailureReason)
	if i := strings.IndexByte(r, '\n'); i >= 0 {
		r = r[:i] + "..."
	}
	return r
}
