package main

import (
	"bufio"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCLIBuilds drives kiln builds against a real kiln serve: trigger --follow streams the log
// and exits 0 for a build that completes and 1 (with the failure reason) for one whose cook
// fails; list, logs and --json show the same builds.
func TestCLIBuilds(t *testing.T) {
	w := newCLIWorld(t)

	out, errOut, code, err := runKiln(t, w.env, "builds", "trigger", "Shooter", w.settings["main"], "--follow") // the project by name
	if code != 0 {
		t.Fatalf("trigger --follow of a good build: exit %d (%v)\n%s", code, err, errOut)
	}
	if !strings.Contains(out, "BUILD COMMAND STARTED") || !strings.Contains(out, "==> kiln: stage package") {
		t.Errorf("the log was not streamed:\n%s", out)
	}
	// The messages name the build by its number in the project, with its id.
	good, _, _ := strings.Cut(strings.TrimPrefix(errOut, "build #1 ("), ")")
	if !strings.HasPrefix(errOut, "build #1 ("+good+") queued\n") || !strings.Contains(errOut, "build #1 ("+good+") complete") {
		t.Errorf("trigger --follow messages do not name build #1 (<id>):\n%s", errOut)
	}

	_, _, code, err = runKiln(t, w.env, "builds", "trigger", "--follow", w.project, w.settings["broken"])
	if code != 1 || err == nil || !strings.Contains(err.Error(), "engine step failed") || !strings.HasPrefix(err.Error(), "build #2 (") {
		t.Fatalf("trigger --follow of a failing build: exit %d, error %v; want 1 with the failure reason", code, err)
	}

	// The list, as a table and as JSON, and filtered by status.
	out, _, code, err = runKiln(t, w.env, "builds", "list", "--project", "Shooter")
	if code != 0 || !strings.HasPrefix(out, "#  PROJECT  ") || !hasRow(out, "1", "Shooter", good) || !regexp.MustCompile(`  (now|[0-9]+ seconds? ago)  `).MatchString(out) || !strings.Contains(out, "complete") || !strings.Contains(out, "failed") {
		t.Fatalf("builds list: exit %d (%v)\n%s", code, err, out)
	}
	out, _, code, err = runKiln(t, w.env, "builds", "list", "--status", "failed", "--json")
	if code != 0 {
		t.Fatalf("builds list --json: exit %d (%v)", code, err)
	}
	var page struct {
		Items []struct{ ID, Status, FailureReason string }
	}
	if err := json.Unmarshal([]byte(out), &page); err != nil {
		t.Fatalf("builds list --json printed no JSON: %v\n%s", err, out)
	}
	if len(page.Items) != 1 || page.Items[0].Status != "failed" || page.Items[0].ID == good || !strings.Contains(page.Items[0].FailureReason, "engine step failed") {
		t.Errorf("failed builds: %+v", page.Items)
	}
	bad := page.Items[0].ID

	// The log of a build that ended, as text and as JSON lines.
	out, _, code, err = runKiln(t, w.env, "builds", "logs", bad)
	if code != 0 || !strings.Contains(out, "LogCook: Error: Failed to cook") {
		t.Fatalf("builds logs: exit %d (%v)\n%s", code, err, out)
	}
	out, _, code, err = runKiln(t, w.env, "builds", "logs", bad, "--json")
	if code != 0 {
		t.Fatalf("builds logs --json: exit %d (%v)", code, err)
	}
	sc, seq := bufio.NewScanner(strings.NewReader(out)), int64(0)
	for sc.Scan() {
		var l struct {
			Seq     int64
			Message string
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Seq != seq+1 {
			t.Fatalf("log line %q after seq %d: %v", sc.Text(), seq, err)
		}
		seq = l.Seq
	}
	if seq < 10 {
		t.Errorf("only %d log lines as JSON", seq)
	}
	// logs --follow of an ended build ends at once, by the build's outcome.
	if _, _, code, _ := runKiln(t, w.env, "builds", "logs", "--follow", bad); code != 1 {
		t.Errorf("logs --follow of a failed build: exit %d, want 1", code)
	}
}

// TestCLICancel: kiln builds cancel stops a running build; cancelling it again is the API's
// invalid_state, printed with its message and request id, exit 2.
func TestCLICancel(t *testing.T) {
	w := newCLIWorld(t)
	out, _, code, err := runKiln(t, w.env, "builds", "trigger", w.project, w.settings["slow"], "--json")
	if code != 0 {
		t.Fatalf("trigger: exit %d (%v)", code, err)
	}
	var trig struct{ BuildID, Status string }
	if err := json.Unmarshal([]byte(out), &trig); err != nil || trig.BuildID == "" || trig.Status != "pending" {
		t.Fatalf("trigger --json printed %q (%v)", out, err)
	}
	out, _, code, err = runKiln(t, w.env, "builds", "cancel", trig.BuildID)
	if code != 0 || !strings.Contains(out, trig.BuildID) || !strings.Contains(out, "failed") || !strings.Contains(out, "cancelled") {
		t.Fatalf("cancel: exit %d (%v)\n%s", code, err, out)
	}
	_, _, code, err = runKiln(t, w.env, "builds", "cancel", trig.BuildID)
	if code != 2 || err == nil || !strings.Contains(err.Error(), "invalid_state") || !strings.Contains(err.Error(), "request id req_") {
		t.Fatalf("cancelling an ended build: exit %d, error %v", code, err)
	}
}

// TestCLIErrors: API errors print the API's message and request id and exit 2; so do usage
// errors; nothing goes to standard output.
func TestCLIErrors(t *testing.T) {
	w := newCLIWorld(t)
	badToken := func(k string) string {
		if k == "KILN_TOKEN" {
			return "kiln_" + strings.Repeat("x", 40)
		}
		return w.env(k)
	}
	tests := []struct {
		name string
		env  func(string) string
		args []string
		want []string
	}{
		{"unknown build", w.env, []string{"builds", "logs", "AAAAAAAAAAAAAAAAAAAAAAAA"}, []string{"not_found", "HTTP 404", "request id req_"}},
		{"bad filter", w.env, []string{"builds", "list", "--status", "baked"}, []string{"validation_failed", "status:", "request id req_"}},
		{"bad token", badToken, []string{"builds", "list"}, []string{"invalid_token", "request id req_"}},
		{"bad commit", w.env, []string{"builds", "trigger", w.project, w.settings["main"], "--commit", "nothex"}, []string{"commit", "request id req_"}},
		{"unknown project", w.env, []string{"builds", "trigger", "Racer", w.settings["main"]}, []string{`no project has the id or name "Racer"`}},
		{"no service", noEnv, []string{"builds", "list"}, []string{"KILN_URL", "kiln login"}},
		{"missing argument", w.env, []string{"builds", "trigger"}, []string{"missing SETTING (usage: kiln builds trigger [PROJECT] SETTING"}},
		{"a project for a setting", w.env, []string{"builds", "trigger", w.project}, []string{`no build setting has the id or name "` + w.project + `"`}},
		{"unknown command", w.env, []string{"builds", "bake"}, []string{"unknown command"}},
		{"unknown flag", w.env, []string{"artifacts", "download", "x", "--resume"}, []string{"not defined"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, code, err := runKiln(t, tt.env, tt.args...)
			if code != 2 || err == nil {
				t.Fatalf("exit %d (%v), want 2", code, err)
			}
			if testing.Verbose() {
				t.Log(err)
			}
			for _, s := range tt.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if out != "" {
				t.Errorf("printed %q on failure", out)
			}
		})
	}
}

// TestCLIHelp: the usage lists the customer commands, and their help exits 0.
func TestCLIHelp(t *testing.T) {
	out, _, code, _ := runKiln(t, noEnv, "help")
	for _, c := range []string{"kiln login", "kiln builds list", "kiln builds trigger", "kiln builds rerun", "kiln builds logs", "kiln builds cancel", "kiln artifacts download"} {
		if code != 0 || !strings.Contains(out, c) {
			t.Errorf("kiln help (exit %d) does not list %q", code, c)
		}
	}
	for _, args := range [][]string{{"builds", "--help"}, {"builds", "list", "-h"}, {"builds", "trigger", "--help"}, {"builds", "rerun", "--help"}, {"artifacts", "download", "--help"}, {"login", "-h"}} {
		if _, _, code, err := runKiln(t, noEnv, args...); code != 0 {
			t.Errorf("kiln %s: exit %d (%v)", strings.Join(args, " "), code, err)
		}
	}
}

// hasRow reports whether a table printed by the CLI has a row that starts with the given cells.
func hasRow(table string, cells ...string) bool {
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) >= len(cells) && slices.Equal(f[:len(cells)], cells) {
			return true
		}
	}
	return false
}

func TestAgoSaysHowLongBefore(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ at, want string }{
		{"2026-11-26T11:59:30Z", "30 seconds ago"},
		{"2026-11-26T11:57:00.5Z", "2 minutes ago"},
		{"2026-11-26T09:00:00Z", "3 hours ago"},
		{"2026-11-19T12:00:00Z", "1 week ago"},
		{"yesterday", "yesterday"},
		{"", "-"},
	} {
		if got := ago(tc.at, now); got != tc.want {
			t.Errorf("ago(%q) = %q, want %q", tc.at, got, tc.want)
		}
	}
}
