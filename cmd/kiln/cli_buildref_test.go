package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestBuildNumber(t *testing.T) {
	for _, tc := range []struct {
		arg     string
		project string
		number  int64
		ok      bool
		err     string
	}{
		{arg: "Shooter#2", project: "Shooter", number: 2, ok: true},
		{arg: "#12", number: 12, ok: true},
		{arg: "7", number: 7, ok: true},
		{arg: "My Game#3", project: "My Game", number: 3, ok: true},
		{arg: "kAb12cd34"},
		{arg: "b1"},
		{arg: "Shooter#", err: "after # comes a build's number"},
		{arg: "Shooter#x2", err: "after # comes a build's number"},
		{arg: "Shooter#0", err: "a build's number is 1 or more"},
		{arg: "0", err: "a build's number is 1 or more"},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			project, n, ok, err := buildNumber(tc.arg)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("buildNumber(%q) error %v, want %q", tc.arg, err, tc.err)
				}
				return
			}
			if err != nil || project != tc.project || n != tc.number || ok != tc.ok {
				t.Fatalf("buildNumber(%q) = %q, %d, %v, %v; want %q, %d, %v", tc.arg, project, n, ok, err, tc.project, tc.number, tc.ok)
			}
		})
	}
}

// TestCLIBuildNumbers: the commands that take a build take its number in its project
// (Shooter#N, or N with --project), and a number alone is an error that says how; a download
// ends saying its MD5 was verified; a setting the project lacks is an error listing the project's
// settings; settings list says how long ago the latest build was, and --json keeps ISO times.
func TestCLIBuildNumbers(t *testing.T) {
	w := newCLIWorld(t)
	out, _, code, err := runKiln(t, w.env, "builds", "trigger", "Shooter", "Linux/Shipping@main", "--follow", "--json")
	if code != 0 {
		t.Fatalf("trigger: exit %d (%v)", code, err)
	}
	var trig struct {
		BuildID string
		Number  int64
	}
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &trig); err != nil || trig.Number == 0 {
		t.Fatalf("trigger --json printed %q", out)
	}
	n := strconv.FormatInt(trig.Number, 10)
	var link struct{ ChecksumMd5 string }
	w.api(t, "GET", "/builds/"+trig.BuildID+"/download", nil, 200, &link)
	dir := t.TempDir()

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // the start of standard output, or the error
	}{
		{"download Shooter#N", []string{"artifacts", "download", "Shooter#" + n, "-o", filepath.Join(dir, "a.tar.gz")}, 0,
			filepath.Join(dir, "a.tar.gz") + " ("},
		{"download --project Shooter N", []string{"artifacts", "download", "--project", "Shooter", n, "-o", filepath.Join(dir, "b.tar.gz")}, 0,
			filepath.Join(dir, "b.tar.gz") + " ("},
		{"download N alone", []string{"artifacts", "download", n}, 2,
			`kiln artifacts download: "` + n + `" looks like a build's number (the # column of kiln builds list), which counts within a project; say which project's: kiln artifacts download PROJECT#` + n},
		{"download a number the project lacks", []string{"artifacts", "download", "Shooter#999"}, 2,
			"project Shooter has no build #999"},
		{"download from two projects", []string{"artifacts", "download", "Shooter#" + n, "--project", "Other"}, 2,
			"kiln artifacts download: give the project once"},
		{"logs Shooter#N", []string{"builds", "logs", "Shooter#" + n}, 0, ""},
		{"trigger a setting the project lacks", []string{"builds", "trigger", "Shooter", "Win64/Shipping"}, 2,
			`project Shooter has no build setting "Win64/Shipping"; its settings: Linux/Shipping@broken, Linux/Shipping@main, Linux/Shipping@slow (kiln settings list --project Shooter shows them)`},
		{"trigger --project, a setting the project lacks", []string{"builds", "trigger", "--project", "Shooter", "Win64/Shipping"}, 2,
			`project Shooter has no build setting "Win64/Shipping"; its settings: Linux/Shipping@broken`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, code, err := runKiln(t, w.env, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d (%v), want %d\n%s", code, err, tc.code, out)
			}
			got := out
			if err != nil {
				got = errorLine(err)
			}
			if !strings.HasPrefix(got, tc.want) && !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if strings.HasPrefix(tc.name, "download") && code == 0 && !strings.HasSuffix(out, "), verified MD5 "+link.ChecksumMd5+"\n") {
				t.Errorf("a finished download printed %q, want it to end with the verified MD5 %s", out, link.ChecksumMd5)
			}
		})
	}

	// settings list: the latest build's time is relative; --json keeps the API's ISO time.
	out, _, code, err = runKiln(t, w.env, "settings", "list")
	if code != 0 {
		t.Fatalf("settings list: exit %d (%v)", code, err)
	}
	row := regexp.MustCompile(`Linux/Shipping@main .*#` + n + ` \(` + trig.BuildID + `\) complete (\d+ (seconds?|minutes?) ago|now)\s*\n`)
	if !row.MatchString(out) || regexp.MustCompile(`\d{4}-\d\d-\d\dT`).MatchString(out) {
		t.Errorf("settings list shows no relative time of the latest build:\n%s", out)
	}
	out, _, _, _ = runKiln(t, w.env, "settings", "list", "--json")
	if !regexp.MustCompile(`"createdAt":\s*"\d{4}-\d\d-\d\dT`).MatchString(out) {
		t.Errorf("settings list --json lost the ISO times:\n%s", out)
	}
}
