package main

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/client"
)

// envWith is an environment of KILN_URL=url and a token.
func envWith(url string) func(string) string {
	return func(k string) string {
		switch k {
		case "KILN_URL":
			return url
		case "KILN_TOKEN":
			return "kiln_t"
		}
		return ""
	}
}

// TestCLIServiceMessages: a KILN_URL that is not kiln, that is kiln's console, or where nothing
// answers is said in words, with what to check (exit status 2, nothing else printed).
func TestCLIServiceMessages(t *testing.T) {
	notKiln := httptest.NewServer(http.NotFoundHandler())
	defer notKiln.Close()
	console := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<!doctype html><html><body>kiln console</body></html>"))
	}))
	defer console.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close()

	tests := []struct {
		name, url string
		args      []string
		want      []string // the error line; one of these
	}{
		{"not kiln", notKiln.URL, []string{"builds", "list"}, []string{
			"kiln: " + notKiln.URL + ` does not answer like a kiln API (GET /builds: HTTP 404 Not Found, without kiln's JSON error envelope {"error", "message", "requestId"}); check KILN_URL: it should be the kiln service's base URL`}},
		{"the console's address", console.URL + "/console/", []string{"builds", "logs", "b1"}, []string{
			"kiln: " + console.URL + "/console answered with a web page, not kiln's API (GET /builds/b1/logs: HTTP 200 OK): use the service's base URL " + console.URL + " (without /console/)"}},
		{"nothing listening", refused, []string{"usage"}, []string{
			"kiln: cannot reach kiln at " + refused + ": connection refused (is the service running? is KILN_URL right?)"}},
		{"no such host", "http://kiln-test.invalid", []string{"artifacts", "download", "b1"}, []string{
			"kiln: cannot reach kiln at http://kiln-test.invalid: no such host kiln-test.invalid (DNS) (is the host name in KILN_URL right?)",
			"kiln: cannot reach kiln at http://kiln-test.invalid: the DNS lookup of kiln-test.invalid failed: "}}, // no resolver here
		{"login where nothing listens", refused, []string{"login"}, []string{
			"kiln: cannot reach kiln at " + refused + ": connection refused (is the service running? is KILN_URL right?)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code, err := runKiln(t, envWith(tt.url), tt.args...)
			if err == nil || code != 2 {
				t.Fatalf("exit %d (%v), want 2", code, err)
			}
			got := errorLine(err)
			if got != tt.want[0] && (len(tt.want) < 2 || !strings.HasPrefix(got, tt.want[1])) {
				t.Errorf("error:\n got %s\nwant %s", got, tt.want[0])
			}
			if out != "" || errOut != "" {
				t.Errorf("printed %q and %q besides the error", out, errOut)
			}
		})
	}
}

// TestCLITimeoutHint: a time-out says what to check, as do the other ways of not reaching kiln.
func TestCLITimeoutHint(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&client.UnreachableError{BaseURL: "https://kiln.example.com", Reason: client.ReasonTimeout, What: "timed out connecting"},
			"kiln: cannot reach kiln at https://kiln.example.com: timed out connecting (is the service running and reachable from this network? is KILN_URL right?)"},
		{&client.UnreachableError{BaseURL: "https://kiln.example.com", Reason: client.ReasonOther, What: "tls: failed to verify certificate"},
			"kiln: cannot reach kiln at https://kiln.example.com: tls: failed to verify certificate (is KILN_URL right?)"},
		{errors.New("plain"), "kiln: plain"},
	}
	for _, tt := range tests {
		if got := errorLine(tt.err); got != tt.want {
			t.Errorf("errorLine(%v):\n got %s\nwant %s", tt.err, got, tt.want)
		}
	}
}

// TestCLIArgumentMessages: a missing or extra argument is named, with the command's usage line,
// and nothing else is printed; no service is asked.
func TestCLIArgumentMessages(t *testing.T) {
	const trigger = "kiln builds trigger [PROJECT] SETTING [--project P] [--branch B] [--commit C] [--changelist N] [--clean] [--follow]"
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"builds", "trigger", "Shooter", "Linux/Shipping", "x"}, `kiln builds trigger: unexpected argument "x" (usage: ` + trigger + ")"},
		{[]string{"builds", "trigger", "--follow"}, "kiln builds trigger: missing SETTING (usage: " + trigger + ")"},
		{[]string{"settings", "list", "x"}, `kiln settings list: unexpected argument "x" (usage: kiln settings list [--project PROJECT])`},
		{[]string{"builds", "logs", "--follow"}, "kiln builds logs: missing BUILD (usage: kiln builds logs BUILD [--project P] [--follow])"},
		{[]string{"builds", "cancel", "b1", "b2"}, `kiln builds cancel: unexpected argument "b2" (usage: kiln builds cancel BUILD [--project P])`},
		{[]string{"builds", "list", "x", "y"}, `kiln builds list: unexpected arguments "x", "y" (usage: kiln builds list [--project PROJECT] [--setting ID] [--status S] [--limit N])`},
		{[]string{"artifacts", "download", "-o", "x.tar.gz"}, "kiln artifacts download: missing BUILD (usage: kiln artifacts download BUILD [--project P] [-o FILE])"},
		{[]string{"usage", "2026-01"}, `kiln usage: unexpected argument "2026-01" (usage: kiln usage [--month YYYY-MM])`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, errOut, code, err := runKiln(t, envWith("http://127.0.0.1:1"), tt.args...)
			if code != 2 || err == nil {
				t.Fatalf("exit %d (%v), want 2", code, err)
			}
			if got := errorLine(err); got != tt.want {
				t.Errorf("error:\n got %s\nwant %s", got, tt.want)
			}
			if out != "" || errOut != "" {
				t.Errorf("printed %q and %q besides the error", out, errOut)
			}
		})
	}
}

// TestCLIGroupAndCommandHelp: a group's help is its commands only; a command's help is its usage line and flags.
func TestCLIGroupAndCommandHelp(t *testing.T) {
	t.Run("group", func(t *testing.T) {
		for _, args := range [][]string{{"builds", "--help"}, {"builds", "help"}, {"artifacts", "-h"}} {
			out, errOut, code, err := runKiln(t, noEnv, args...)
			if code != 0 || errOut != "" {
				t.Fatalf("kiln %s: exit %d (%v), stderr %q", strings.Join(args, " "), code, err, errOut)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if lines[0] != "Usage:" || len(lines) > 15 {
				t.Errorf("kiln %s printed %d lines:\n%s", strings.Join(args, " "), len(lines), out)
			}
			for _, l := range lines[1:] {
				if strings.HasPrefix(l, "  kiln ") && !strings.HasPrefix(l, "  kiln "+args[0]+" ") {
					t.Errorf("kiln %s lists another group's command: %q", strings.Join(args, " "), l)
				}
			}
		}
		out, _, _, _ := runKiln(t, noEnv, "builds", "--help")
		for _, c := range []string{"list", "trigger", "logs", "cancel"} {
			if !strings.Contains(out, "\n  kiln builds "+c+" ") {
				t.Errorf("kiln builds --help leaves out %s:\n%s", c, out)
			}
		}
		if !strings.Contains(out, "      PROJECT is a project's id or name; SETTING a build setting's id or\n") {
			t.Errorf("kiln builds --help leaves out what PROJECT is:\n%s", out)
		}
	})
	t.Run("command", func(t *testing.T) {
		out, errOut, code, err := runKiln(t, noEnv, "builds", "trigger", "--help")
		if code != 0 || out != "" {
			t.Fatalf("exit %d (%v), stdout %q", code, err, out)
		}
		const head = "usage: kiln builds trigger [PROJECT] SETTING [--project P] [--branch B] [--commit C] [--changelist N] [--clean] [--follow]\n" +
			"  PROJECT is a project's id or name; SETTING a build setting's id or\n"
		if !strings.HasPrefix(errOut, head) || !strings.Contains(errOut, "  -follow\n") || strings.Contains(errOut, "kiln serve") || strings.Contains(errOut, "kiln builds list") {
			t.Errorf("kiln builds trigger --help printed:\n%s\nwant it to start with:\n%s", errOut, head)
		}
	})
}

// TestCLIUnknownCommand: the error comes first and alone, with the closest command when one is
// obvious and where the list is.
func TestCLIUnknownCommand(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"deploy"}, "kiln: unknown command \"deploy\"\nkiln help lists the commands."},
		{[]string{"biulds", "list"}, "kiln: unknown command \"biulds\" (did you mean kiln builds?)\nkiln help lists the commands."},
		{[]string{"artifact", "download", "b1"}, "kiln: unknown command \"artifact\" (did you mean kiln artifacts?)\nkiln help lists the commands."},
		{[]string{"trigger", "Shooter", "s1"}, "kiln: unknown command \"trigger\" (did you mean kiln builds trigger?)\nkiln help lists the commands."},
		{[]string{"x"}, "kiln: unknown command \"x\"\nkiln help lists the commands."},
	}
	for _, tt := range tests {
		t.Run(tt.args[0], func(t *testing.T) {
			out, errOut, code, err := runKiln(t, noEnv, tt.args...)
			if code != 2 || err == nil {
				t.Fatalf("exit %d (%v), want 2", code, err)
			}
			if got := errorLine(err); got != tt.want {
				t.Errorf("error:\n got %q\nwant %q", got, tt.want)
			}
			if out != "" || errOut != "" {
				t.Errorf("printed %q and %q besides the error", out, errOut)
			}
		})
	}
}
