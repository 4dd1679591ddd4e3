package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestCLIRerun: kiln builds rerun --follow queues a new build of the same setting, branch and
// commit as a finished one, streams it and exits by its outcome; the list shows it linked to
// the original and who triggered each; an unknown build is the API's not_found, exit 2.
func TestCLIRerun(t *testing.T) {
	w := newCLIWorld(t)
	_, errOut, code, err := runKiln(t, w.env, "builds", "trigger", w.project, w.settings["main"], "--follow")
	if code != 0 {
		t.Fatalf("trigger --follow: exit %d (%v)\n%s", code, err, errOut)
	}
	orig := queuedID(t, errOut)

	out, errOut, code, err := runKiln(t, w.env, "builds", "rerun", orig, "--follow")
	if code != 0 || !strings.Contains(errOut, "a re-run of "+orig) || !strings.Contains(out, "BUILD COMMAND STARTED") {
		t.Fatalf("rerun --follow: exit %d (%v)\nstdout:\n%s\nstderr:\n%s", code, err, out, errOut)
	}
	again := queuedID(t, errOut)

	out, _, code, err = runKiln(t, w.env, "builds", "list", "--json")
	if code != 0 {
		t.Fatalf("builds list --json: exit %d (%v)", code, err)
	}
	var page struct {
		Items []struct {
			ID, Status, Commit, RerunOf string
			Trigger                     struct{ Kind, RerunOf string }
		}
	}
	if err := json.Unmarshal([]byte(out), &page); err != nil || len(page.Items) != 2 {
		t.Fatalf("builds list --json: %v\n%s", err, out)
	}
	newest, first := page.Items[0], page.Items[1]
	if newest.ID != again || newest.RerunOf != orig || newest.Trigger.Kind != "rerun" || newest.Status != "complete" ||
		newest.Commit == "" || newest.Commit != first.Commit || first.Trigger.Kind != "user" {
		t.Errorf("builds after the re-run: %+v", page.Items)
	}
	out, _, code, err = runKiln(t, w.env, "builds", "list")
	if code != 0 || !strings.Contains(out, " BY ") || !strings.Contains(out, "re-run of "+orig+" by ") {
		t.Errorf("builds list: exit %d (%v), want a BY column naming the re-run\n%s", code, err, out)
	}

	out, _, code, err = runKiln(t, w.env, "builds", "rerun", "kP7MT581IJ17LnqWLqZ5aL3k")
	if code != 2 || err == nil || !strings.Contains(err.Error(), "not_found") || out != "" {
		t.Errorf("rerun of an unknown build: exit %d, error %v, stdout %q", code, err, out)
	}
}

var queuedLine = regexp.MustCompile(`build (?:#\d+ \()?([A-Za-z0-9_-]+)\)? queued`)

// queuedID is the id of the build a "build #N (<id>) queued" line names.
func queuedID(t *testing.T, errOut string) string {
	t.Helper()
	m := queuedLine.FindStringSubmatch(errOut)
	if m == nil {
		t.Fatalf("no queued line in:\n%s", errOut)
	}
	return m[1]
}
