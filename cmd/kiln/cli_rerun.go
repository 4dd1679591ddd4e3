package main

import (
	"context"
	"flag"
	"fmt"
	"io"
)

// rerunBuild runs kiln builds rerun BUILD_ID [--follow]: it queues a new build of the same
// setting, branch and commit or changelist, and prints its id (or, with --json, the build;
// asJSON is fs's --json flag). With --follow it streams the new build's log and exits by how
// it ended, as trigger --follow does.
func rerunBuild(ctx context.Context, fs *flag.FlagSet, args []string, asJSON *bool, getenv func(string) string, stdout, stderr io.Writer) error {
	follow := fs.Bool("follow", false, "stream the new build's log and exit when it ends: 0 complete, 1 failed")
	project := projectOfNumber(fs)
	pos, err := parseArgs(fs, args, 1)
	if err != nil {
		return err
	}
	c, err := apiClient(getenv)
	if err != nil {
		return err
	}
	id, err := resolveBuild(ctx, c, "kiln builds rerun", pos[0], *project)
	if err != nil {
		return err
	}
	b, err := c.Rerun(ctx, id)
	if err != nil {
		return err
	}
	switch {
	case *asJSON:
		if err := printJSON(stdout, b); err != nil {
			return err
		}
	case *follow:
		fmt.Fprintf(stderr, "build %s queued, a re-run of %s\n", buildName(b.ID, b.Number), pos[0])
	default:
		fmt.Fprintln(stdout, b.ID)
	}
	if !*follow {
		return nil
	}
	return followBuild(ctx, c, b.ID, *asJSON, stdout, stderr)
}
