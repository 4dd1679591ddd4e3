package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCLISettings: kiln settings list shows each setting's id, project, readable name, branch,
// engine, trigger and latest build; kiln builds trigger takes a setting by name, with the
// branch where two of a project share Platform/BuildType, in any project or with --project
// where two projects have it; a shared name is an error (exit 2) listing the candidates.
func TestCLISettings(t *testing.T) {
	w := newCLIWorld(t)
	out, _, code, err := runKiln(t, w.env, "settings", "list")
	if code != 0 {
		t.Fatalf("settings list: exit %d (%v)", code, err)
	}
	for branch, id := range w.settings {
		row := regexp.MustCompile(regexp.QuoteMeta(id) + `\s+Shooter\s+Linux/Shipping@` + branch + `\s+` + branch + `\s+UE 5\.3\s+manual\s+-\n`)
		if !row.MatchString(out) {
			t.Errorf("settings list has no row %s: Shooter Linux/Shipping@%s %s UE 5.3 manual -\n%s", id, branch, branch, out)
		}
	}
	if !strings.HasPrefix(out, "ID ") || !strings.Contains(out, "BRANCH/STREAM") || !strings.Contains(out, "LAST BUILD") {
		t.Errorf("settings list header:\n%s", out)
	}

	_, errOut, code, err := runKiln(t, w.env, "builds", "trigger", "Linux/Shipping@main", "--follow")
	if code != 0 {
		t.Fatalf("trigger Linux/Shipping@main --follow: exit %d (%v)\n%s", code, err, errOut)
	}
	if strings.Contains(errOut, "\r") {
		t.Errorf("a progress line went to standard error that is not a terminal: %q", errOut)
	}
	first := queuedID(t, errOut)
	var b struct{ BuildSettingID string }
	w.api(t, "GET", "/builds/"+first, nil, http.StatusOK, &b)
	if b.BuildSettingID != w.settings["main"] {
		t.Fatalf("Linux/Shipping@main built setting %s, want %s", b.BuildSettingID, w.settings["main"])
	}
	out, _, code, err = runKiln(t, w.env, "settings", "list", "--project", "Shooter", "--json")
	var list struct {
		Items []struct {
			ID, Name, Project string
			LastBuild         *struct{ ID, Status string }
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list.Items) != 3 {
		t.Fatalf("settings list --json: exit %d (%v)\n%s", code, err, out)
	}
	for _, s := range list.Items {
		if s.ID == w.settings["main"] && (s.LastBuild == nil || s.LastBuild.ID != first || s.LastBuild.Status != "complete") {
			t.Errorf("main's latest build: %+v, want %s complete", s.LastBuild, first)
		}
	}

	_, _, code, err = runKiln(t, w.env, "builds", "trigger", "Shooter", "Linux/Shipping")
	if code != 2 || err == nil || !strings.Contains(err.Error(), "Linux/Shipping@main ("+w.settings["main"]+")") ||
		!strings.Contains(err.Error(), "Linux/Shipping@slow ("+w.settings["slow"]+")") {
		t.Errorf("a name three settings share: exit %d, %v; want exit 2 listing them", code, err)
	}
	_, _, code, err = runKiln(t, w.env, "builds", "trigger", "Mac/Shipping")
	if code != 2 || err == nil || !strings.Contains(err.Error(), `"Mac/Shipping"`) {
		t.Errorf("a name no setting has: exit %d, %v", code, err)
	}

	var arena struct{ ID string }
	w.api(t, "POST", "/projects/add-repo", map[string]any{"name": "Arena", "installationId": strconv.Itoa(cliInstallation), "repoFullName": "studio/shooter"}, http.StatusCreated, &arena)
	var other struct{ ID string }
	w.api(t, "POST", "/projects/"+arena.ID+"/build-settings", map[string]any{
		"platform": "Linux", "buildType": "Shipping", "ueVersion": "5.3", "trigger": "manual", "branch": "main",
	}, http.StatusCreated, &other)
	_, _, code, err = runKiln(t, w.env, "builds", "trigger", "Linux/Shipping@main")
	if code != 2 || err == nil || !strings.Contains(err.Error(), "--project") || !strings.Contains(err.Error(), "Arena: Linux/Shipping ("+other.ID+")") {
		t.Errorf("a name of two projects: exit %d, %v; want exit 2 asking for --project", code, err)
	}
	out, errOut, code, err = runKiln(t, w.env, "builds", "trigger", "--project", "Arena", "linux/shipping")
	if code != 0 {
		t.Fatalf("trigger --project Arena linux/shipping: exit %d (%v)\n%s", code, err, errOut)
	}
	w.api(t, "GET", "/builds/"+strings.TrimSpace(out), nil, http.StatusOK, &b)
	if b.BuildSettingID != other.ID {
		t.Errorf("--project Arena linux/shipping built setting %s, want %s", b.BuildSettingID, other.ID)
	}
}

// TestCLIFollowShowsProgress: on a terminal, builds trigger --follow rewrites one line on standard
// error with the build's stage and time left (from the setting's complete build), and ends it
// with a newline before the build's outcome.
func TestCLIFollowShowsProgress(t *testing.T) {
	w := newCLIWorld(t)
	if _, errOut, code, err := runKiln(t, w.env, "builds", "trigger", "Shooter", w.settings["main"], "--follow"); code != 0 {
		t.Fatalf("trigger --follow: exit %d (%v)\n%s", code, err, errOut)
	}
	defer func(d time.Duration) { stageEvery = d }(stageEvery)
	stageEvery = 20 * time.Millisecond
	pts, read := terminal(t)
	var out bytes.Buffer
	err := run(context.Background(), []string{"builds", "trigger", "Shooter", "Linux/Shipping@main", "--follow"}, w.env, &out, pts)
	pts.Close()
	if err != nil {
		t.Fatal(err)
	}
	s := read()
	line := regexp.MustCompile(`\r\x1b\[Kstage [a-z]+ · ([0-9]+% · about [0-9a-z.]+ left \(from the last build\)|[0-9a-z.]+, longer than the last build)`)
	if !line.MatchString(s) {
		t.Fatalf("no stage line with the time left on the terminal: %q", s)
	}
	if !regexp.MustCompile(`the last build\)?\r?\nbuild #2 \([^)]+\) complete`).MatchString(s) {
		t.Errorf("the stage line does not end before the build's outcome: %q", s)
	}
	if !strings.Contains(out.String(), "BUILD COMMAND STARTED") {
		t.Errorf("the log went missing from standard output:\n%s", out.String())
	}
}
