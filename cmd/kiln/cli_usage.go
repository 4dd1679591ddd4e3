package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
)

// usageCmd runs kiln usage: the organization's use of a month against its plan.
func usageCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kiln usage", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	month := fs.String("month", "", "the calendar month YYYY-MM (UTC; default this month)")
	if _, err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	c, err := apiClient(getenv)
	if err != nil {
		return err
	}
	u, err := c.Usage(ctx, *month)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, u)
	}
	fmt.Fprintf(stdout, "%s plan, %s (UTC)\n\n", u.Plan, u.Month)
	rows := [][]string{
		{"build minutes", strconv.FormatInt(u.BuildMinutes.Used, 10), allowed(u.BuildMinutes.Allowed)},
		{"builds running", strconv.Itoa(u.ConcurrentBuilds.Current), allowed(u.ConcurrentBuilds.Allowed)},
		{"projects", strconv.Itoa(u.Projects.Current), allowed(u.Projects.Allowed)},
		{"artifact storage", bytesText(u.ArtifactStorageBytes), "-"},
		{"skipped triggers", strconv.FormatInt(u.SkippedTriggers["total"], 10), "-"},
	}
	if c := u.BuildCaches; c != nil { // held now, whatever the month
		capText := "no cap"
		if c.MaxBytes != nil {
			capText = bytesText(*c.MaxBytes) + " (oldest removed)"
		}
		rows = append(rows, []string{"build caches (now)", fmt.Sprintf("%s in %d", bytesText(c.Bytes), c.Count), capText})
	}
	platforms := make([]string, 0, len(u.BuildMinutes.ByPlatform))
	for p := range u.BuildMinutes.ByPlatform {
		platforms = append(platforms, p)
	}
	sort.Strings(platforms)
	for _, p := range platforms {
		rows = append(rows, []string{"  minutes on " + p, strconv.FormatInt(u.BuildMinutes.ByPlatform[p], 10), "-"})
	}
	return printTable(stdout, []string{"", "USED", "ALLOWED"}, rows)
}

// allowed renders a plan's limit; nil is unlimited.
func allowed(n *int64) string {
	if n == nil {
		return "unlimited"
	}
	return strconv.FormatInt(*n, 10)
}
