//go:build unix

package scripts

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// demoSteps are the steps demo.sh prints, as in the script (between its quoted heredoc's start
// and the end marker), run after KILN and TOKEN are exported.
func demoSteps(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("demo.sh")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(src), "cat <<'STEPS'\n")
	steps, _, ok2 := strings.Cut(rest, "# --- end of demo steps ---")
	if !ok || !ok2 {
		t.Fatal("demo.sh: no quoted steps before the end marker")
	}
	return steps
}

// fakeKiln answers the steps' requests: each path's answer from answers ("METHOD /path" →
// status and body), 404 otherwise; it records the requests.
type fakeKiln struct {
	*httptest.Server
	mu  sync.Mutex
	got []string
}

func newFakeKiln(t *testing.T, answers map[string]struct {
	status int
	body   string
}) *fakeKiln {
	f := &fakeKiln{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Method + " " + r.URL.Path
		f.mu.Lock()
		f.got = append(f.got, key)
		f.mu.Unlock()
		a, ok := answers[key]
		if !ok {
			a.status, a.body = 404, `{"error":"not_found","message":"no such thing"}`
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		w.Write([]byte(a.body))
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeKiln) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.got...)
}

// The printed steps stop at the first failure with the API's own message: no traceback, no
// md5sum error, no request after the failing one.
func TestDemoStepsStopAtTheFirstError(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "grep", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	type answer = struct {
		status int
		body   string
	}
	ok := map[string]answer{
		"GET /auth/me":                                {200, `{"user":{"id":"u1"},"organization":{"id":"o1","name":"Org"},"membership":{"role":"owner"}}`},
		"PATCH /organizations/o1":                     {200, `{"id":"o1"}`},
		"POST /projects/add-repo":                     {201, `{"id":"p1","name":"Shooter"}`},
		"POST /projects/p1/build-settings":            {201, `{"id":"s1"}`},
		"POST /projects/p1/build-settings/s1/trigger": {202, `{"buildId":"b1"}`},
		"GET /builds/b1/logs":                         {200, "building...\n"},
	}
	with := func(extra map[string]answer) map[string]answer {
		m := map[string]answer{}
		for k, v := range ok {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	for _, tt := range []struct {
		name    string
		answers map[string]answer
		want    string // in the output
		last    string // the last request made
	}{
		{"a refused token", map[string]answer{"GET /auth/me": {401, `{"error":"invalid_token","message":"the token is unknown or revoked","requestId":"r1"}`}},
			"demo: GET /auth/me answered 401: the token is unknown or revoked", "GET /auth/me"},
		{"a refused project", with(map[string]answer{"POST /projects/add-repo": {404, `{"error":"not_found","message":"repository demo/shooter is not in installation 1"}`}}),
			"demo: POST /projects/add-repo answered 404: repository demo/shooter is not in installation 1", "POST /projects/add-repo"},
		{"a failed build", with(map[string]answer{"GET /builds/b1": {200, `{"id":"b1","status":"failed","failureReason":"bwrap is not installed"}`}}),
			"demo: the build is failed: bwrap is not installed", "GET /builds/b1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeKiln(t, tt.answers)
			run := exec.Command("bash", "-c", "export KILN="+f.URL+" TOKEN=kiln_test\n"+demoSteps(t))
			run.Dir = t.TempDir()
			out, err := run.CombinedOutput()
			if err == nil {
				t.Fatalf("the steps succeeded:\n%s", out)
			}
			if !strings.Contains(string(out), tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, out)
			}
			for _, bad := range []string{"Traceback", "md5sum", "No such file"} {
				if strings.Contains(string(out), bad) {
					t.Errorf("output has %q:\n%s", bad, out)
				}
			}
			if got := f.requests(); len(got) == 0 || got[len(got)-1] != tt.last {
				t.Errorf("requests %v, want the last to be %s", got, tt.last)
			}
		})
	}
}

// The script and the steps it prints parse, and pass shellcheck where it is installed.
func TestDemoScriptLints(t *testing.T) {
	if out, err := exec.Command("bash", "-n", "demo.sh").CombinedOutput(); err != nil {
		t.Fatalf("bash -n demo.sh: %v\n%s", err, out)
	}
	steps := t.TempDir() + "/steps.sh"
	if err := os.WriteFile(steps, []byte("export KILN=x TOKEN=y\n"+demoSteps(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("bash", "-n", steps).CombinedOutput(); err != nil {
		t.Fatalf("bash -n on the printed steps: %v\n%s", err, out)
	}
	if _, err := exec.LookPath("shellcheck"); err != nil {
		t.Skip("shellcheck is not installed")
	}
	for _, args := range [][]string{{"demo.sh", "install-bubblewrap.sh"}, {"-s", "bash", steps}} {
		if out, err := exec.Command("shellcheck", args...).CombinedOutput(); err != nil {
			t.Errorf("shellcheck %v: %v\n%s", args, err, out)
		}
	}
}

// A KILN_DEMO_SIGNUP other than 0 or 1, or a port that is not a number, stops the demo before it
// starts or makes anything.
func TestDemoRefusesBadSettings(t *testing.T) {
	for _, tc := range []struct{ setting, want string }{
		{"KILN_DEMO_SIGNUP=yes", `KILN_DEMO_SIGNUP is 1 (sign-up in the console) or 0 (the curl steps), not "yes"`},
		{"KILN_DEMO_PORT=80a", `KILN_DEMO_PORT is a port number, not "80a"`},
		{"KILN_DEMO_GITHUB_PORT=../x", `KILN_DEMO_GITHUB_PORT is a port number, not "../x"`},
	} {
		t.Run(tc.setting, func(t *testing.T) {
			dir := t.TempDir() + "/demo"
			cmd := exec.Command("./demo.sh")
			cmd.Env = append(os.Environ(), "KILN_DEMO_DIR="+dir, tc.setting)
			out, err := cmd.CombinedOutput()
			if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 2 {
				t.Fatalf("demo.sh with %s: %v, want exit status 2:\n%s", tc.setting, err, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("output:\n%s", out)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("it made %s (%v)", dir, err)
			}
		})
	}
}
