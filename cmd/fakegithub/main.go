// Command fakegithub runs the fake GitHub of kiln's tests as a program, so kiln can be tried
// without a real GitHub App: one App, one installation ("demo") with a repository holding an
// Unreal project, and two accounts to sign in with: "octo-dev", who installs the App, and
// "ada", a teammate to invite (so an invitation can be accepted in the demo). It
// prints the settings that point `kiln serve` at it (and, with --env FILE, writes them there for
// scripts such as `make demo`), and serves until Ctrl-C. With --setup-url, the App's install page sends the installer there, as
// GitHub sends them to a GitHub App's Setup URL.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/kilnbuild/kiln/shared/github/githubtest"
)

// demoInstallation is the installation id to link.
const demoInstallation = 1

// demoUser is the GitHub account the fake's authorize page offers first for "Sign in with
// GitHub"; teammate is the second, whom demoUser invites.
var (
	demoUser = githubtest.User{Login: "octo-dev", Name: "Octo Dev",
		Emails: []githubtest.Email{{Address: "octo-dev@example.com", Primary: true, Verified: true}}}
	teammate = githubtest.User{Login: "ada", Name: "Ada Lovelace",
		Emails: []githubtest.Email{{Address: "ada@example.com", Primary: true, Verified: true}}}
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on (host:port; port 0 picks a free one)")
	envFile := flag.String("env", "", "also write the kiln settings to this file, as KEY='value' lines")
	oauth := flag.Bool("oauth-client", false, "also write the App's OAuth client (KILN_GITHUB_CLIENT_ID, KILN_GITHUB_CLIENT_SECRET) "+
		"to the --env file, for sign-in and the verified install flow (linking an installation by id is then refused)")
	setupURL := flag.String("setup-url", "", "the App's Setup URL, where its install page sends the installer "+
		"(kiln's $KILN_PUBLIC_URL/integrations/github/callback); without it the install page is refused")
	flag.Parse()
	if err := checkLoopback(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "fakegithub:", err)
		os.Exit(2)
	}
	if err := checkSetupURL(*setupURL); err != nil {
		fmt.Fprintln(os.Stderr, "fakegithub:", err)
		os.Exit(2)
	}
	if *oauth && *envFile == "" {
		fmt.Fprintln(os.Stderr, "fakegithub: --oauth-client writes to the --env file; give one")
		os.Exit(2)
	}
	p := &program{}
	defer p.cleanup()
	gh := githubtest.NewAt(p, *addr)
	gh.SetupURL = *setupURL
	gh.AddInstallation(demoInstallation, "demo")
	gh.AddUser(demoUser)
	gh.AddUser(teammate)
	repo := gh.AddRepo(demoInstallation, "demo/shooter", true, "main")
	repo.Commit("main", "Add the Shooter game", "Ada Lovelace", map[string]string{
		"Shooter/Shooter.uproject": `{"FileVersion": 3, "EngineAssociation": "5.3",
  "Modules": [{"Name": "Shooter", "Type": "Runtime", "LoadingPhase": "Default"}],
  "Plugins": [{"Name": "OnlineSubsystemSteam", "Enabled": true}]}`,
		"Shooter/Source/Shooter/Shooter.cpp": "// the game\n",
	})
	repo.Commit("dev", "Faster reloads", "Grace Hopper", map[string]string{"Shooter/Source/Shooter/Weapon.cpp": "// reload\n"})
	keyPath := filepath.Join(p.TempDir(), "github-app.pem")
	if err := os.WriteFile(keyPath, gh.PrivateKeyPEM, 0o600); err != nil {
		p.Fatalf("write the App key: %v", err)
	}
	settings := [][2]string{
		{"KILN_GITHUB_APP_ID", fmt.Sprint(gh.AppID)}, {"KILN_GITHUB_APP_KEY", keyPath},
		{"KILN_GITHUB_API_URL", gh.URL()}, {"KILN_GITHUB_WEB_URL", gh.WebURL()},
	}
	if *oauth {
		// Only written to the file (mode 0600), never printed.
		settings = append(settings, [2]string{"KILN_GITHUB_CLIENT_ID", gh.ClientID},
			[2]string{"KILN_GITHUB_CLIENT_SECRET", gh.ClientSecret})
	}
	if *envFile != "" {
		var b strings.Builder
		for _, kv := range settings {
			fmt.Fprintf(&b, "%s='%s'\n", kv[0], kv[1])
		}
		// Written whole, then renamed: a reader never sees half of it.
		if err := os.WriteFile(*envFile+".tmp", []byte(b.String()), 0o600); err != nil {
			p.Fatalf("write %s: %v", *envFile, err)
		}
		if err := os.Rename(*envFile+".tmp", *envFile); err != nil {
			p.Fatalf("write %s: %v", *envFile, err)
		}
	}
	fmt.Printf("fakegithub: a fake GitHub App with installation %d (account demo, repository demo/shooter),\n", demoInstallation)
	fmt.Printf("and the GitHub accounts %s and %s (%s, to invite) to sign in with (with the App's OAuth client set: --oauth-client).\n",
		demoUser.Login, teammate.Login, teammate.Emails[0].Address)
	if gh.SetupURL != "" {
		fmt.Printf("The App's install page, %sapps/%s/installations/new, sends the installer to %s.\n", gh.WebURL(), gh.AppSlug, gh.SetupURL)
	}
	fmt.Printf("Start kiln against it with:\n\n")
	fmt.Printf("  export KILN_GITHUB_APP_ID=%d KILN_GITHUB_APP_KEY=%s \\\n", gh.AppID, keyPath)
	fmt.Printf("         KILN_GITHUB_API_URL=%s KILN_GITHUB_WEB_URL=%s\n", gh.URL(), gh.WebURL())
	fmt.Printf("  make run\n\nCtrl-C stops it.\n")
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	<-stop
}

// checkLoopback refuses an address that is not on loopback: the fake has no real security.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if a, err := netip.ParseAddr(host); err != nil || !a.IsLoopback() {
		return fmt.Errorf("--addr %q: must be a loopback address such as 127.0.0.1:9091", addr)
	}
	return nil
}

// checkSetupURL accepts no Setup URL, or an absolute http(s) URL.
func checkSetupURL(raw string) error {
	if raw == "" {
		return nil
	}
	if _, ok := githubtest.CallbackURL(raw); !ok {
		return fmt.Errorf("--setup-url %q: must be an absolute http(s) URL such as http://127.0.0.1:8090/integrations/github/callback", raw)
	}
	return nil
}

// program gives the fake what a test would: a temp dir, cleanups, and a way to fail.
type program struct {
	dirs     []string
	cleanups []func()
}

func (p *program) Helper() {}

func (p *program) Fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "fakegithub: "+format+"\n", args...)
	p.cleanup()
	os.Exit(1)
}

func (p *program) TempDir() string {
	dir, err := os.MkdirTemp("", "fakegithub-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakegithub:", err)
		os.Exit(1)
	}
	p.dirs = append(p.dirs, dir)
	return dir
}

func (p *program) Cleanup(f func()) { p.cleanups = append(p.cleanups, f) }

func (p *program) cleanup() {
	for i := len(p.cleanups) - 1; i >= 0; i-- {
		p.cleanups[i]()
	}
	p.cleanups = nil
	for _, d := range p.dirs {
		os.RemoveAll(d)
	}
	p.dirs = nil
}
