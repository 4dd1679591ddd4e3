package githubtest

import (
	"encoding/base64"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCloneWithInstallationToken(t *testing.T) {
	t.Parallel()
	s := New(t)
	s.AddInstallation(1, "studio")
	other := int64(2)
	s.AddInstallation(other, "elsewhere")
	repo := s.AddRepo(1, "studio/Shooter", true, "main")
	sha := repo.Commit("main", "first", "Ada Lovelace", map[string]string{"Shooter.uproject": "{}", "Source/a.cpp": "int a;"})
	cloneURL := s.WebURL() + "studio/Shooter.git"

	clone := func(token string) (string, error) {
		dir := filepath.Join(t.TempDir(), "w")
		args := []string{"-c", "credential.helper="}
		if token != "" {
			basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
			args = append(args, "-c", "http.extraHeader=Authorization: Basic "+basic)
		}
		cmd := exec.Command("git", append(args, "clone", "--quiet", cloneURL, dir)...)
		cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return string(out), err
		}
		head, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
		return strings.TrimSpace(string(head)), err
	}

	got, err := clone(s.IssueToken(1))
	if err != nil || got != sha {
		t.Fatalf("clone with token: %v %s, want head %s", err, got, sha)
	}
	if out, err := clone(""); err == nil {
		t.Fatalf("clone without token worked: %s", out)
	}
	if out, err := clone(s.IssueToken(other)); err == nil {
		t.Fatalf("clone with another installation's token worked: %s", out)
	}
	if s.Requests(RouteGit) == 0 {
		t.Fatal("git requests were not counted")
	}
}

func TestAppEndpointsWantAJWT(t *testing.T) {
	t.Parallel()
	s := New(t)
	s.AddInstallation(7, "studio")
	for _, auth := range []string{"", "Bearer not.a.jwt", "token " + s.IssueToken(7)} {
		req, _ := http.NewRequest("POST", s.URL()+"app/installations/7/access_tokens", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%q: status %d, want 401", auth, resp.StatusCode)
		}
	}
}

// The Checks API refuses what GitHub refuses: more than 50 annotations a request, a missing
// name, a completed run without a conclusion, an installation without checks: write.
func TestCheckRunValidation(t *testing.T) {
	t.Parallel()
	s := New(t)
	s.AddInstallation(1, "studio")
	repo := s.AddRepo(1, "studio/Shooter", true, "main")
	sha := repo.Commit("main", "first", "Ada Lovelace", map[string]string{"Shooter.uproject": "{}"})
	post := func(body string) int {
		req, _ := http.NewRequest("POST", s.URL()+"repos/studio/Shooter/check-runs", strings.NewReader(body))
		req.Header.Set("Authorization", "token "+s.IssueToken(1))
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	ok := `{"name":"kiln/x","head_sha":"` + sha + `"}`
	if got := post(ok); got != http.StatusForbidden {
		t.Fatalf("without checks: write: %d, want 403", got)
	}
	s.GrantChecks(1)
	anns := func(n int) string {
		var a []string
		for i := 1; i <= n; i++ {
			a = append(a, `{"path":"a.cpp","start_line":1,"end_line":1,"annotation_level":"failure","message":"m"}`)
		}
		return `{"name":"kiln/x","head_sha":"` + sha + `","output":{"title":"t","summary":"s","annotations":[` + strings.Join(a, ",") + `]}}`
	}
	cases := []struct {
		body string
		want int
	}{
		{ok, http.StatusCreated},
		{anns(50), http.StatusCreated},
		{anns(51), http.StatusUnprocessableEntity},
		{`{"head_sha":"` + sha + `"}`, http.StatusUnprocessableEntity},
		{`{"name":"kiln/x","head_sha":"` + strings.Repeat("0", 40) + `"}`, http.StatusUnprocessableEntity},
		{`{"name":"kiln/x","head_sha":"` + sha + `","status":"completed"}`, http.StatusUnprocessableEntity},
		{`{"name":"kiln/x","head_sha":"` + sha + `","conclusion":"failure"}`, http.StatusUnprocessableEntity}, // no completed_at
		{`{"name":"kiln/x","head_sha":"` + sha + `","output":{"title":"t"}}`, http.StatusUnprocessableEntity},
	}
	for _, c := range cases {
		if got := post(c.body); got != c.want {
			t.Errorf("%.120s: %d, want %d", c.body, got, c.want)
		}
	}
	if runs := s.CheckRuns(); len(runs) != 2 || len(runs[1].Annotations) != 50 {
		t.Fatalf("recorded: %d runs", len(runs))
	}
}
