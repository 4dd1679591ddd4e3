package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLILogin: kiln login checks the token, saves URL and token in the user's config dir
// (0600, never printing the token), and later commands use them without KILN_URL/KILN_TOKEN;
// a token the service refuses saves nothing.
func TestCLILogin(t *testing.T) {
	w := newCLIWorld(t)
	path := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "kiln", "config.json")
	onlyURL := func(k string) string {
		if k == "KILN_URL" {
			return w.svc.URL()
		}
		return ""
	}

	cliStdin = strings.NewReader("kiln_" + strings.Repeat("z", 40) + "\n")
	t.Cleanup(func() { cliStdin = os.Stdin })
	if _, _, code, err := runKiln(t, onlyURL, "login"); code != 2 || !strings.Contains(err.Error(), "invalid_token") {
		t.Fatalf("login with a bad token: exit %d (%v)", code, err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("a refused token was saved")
	}

	cliStdin = strings.NewReader("ksess_" + strings.Repeat("z", 40) + "\n")
	if _, _, code, err := runKiln(t, onlyURL, "login"); code != 2 || !strings.Contains(err.Error(), "API token") {
		t.Fatalf("login with a console session: exit %d (%v)", code, err)
	}

	cliStdin = strings.NewReader(w.token + "\n")
	out, errOut, code, err := runKiln(t, noEnv, "login", "--url", w.svc.URL())
	if code != 0 {
		t.Fatalf("login: exit %d (%v)", code, err)
	}
	if strings.Contains(out+errOut, w.token) || !strings.Contains(out, "Logged in") {
		t.Errorf("login printed %q %q", out, errOut)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("config.json mode %v, want 0600", fi.Mode().Perm())
	}
	if raw, _ := os.ReadFile(path); !strings.Contains(string(raw), w.token) {
		t.Errorf("config.json lacks the token")
	}

	// Later commands need no environment; the environment still wins over the file.
	out, _, code, err = runKiln(t, noEnv, "builds", "list", "--json")
	if code != 0 || !strings.Contains(out, `"items"`) {
		t.Fatalf("builds list after login: exit %d (%v) %q", code, err, out)
	}
	badEnv := func(k string) string {
		if k == "KILN_TOKEN" {
			return "kiln_" + strings.Repeat("y", 40)
		}
		return ""
	}
	if _, _, code, err := runKiln(t, badEnv, "builds", "list"); code != 2 || !strings.Contains(err.Error(), "invalid_token") {
		t.Errorf("KILN_TOKEN did not override the saved token: exit %d (%v)", code, err)
	}
}
