package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// signInWithGitHub signs a browser tab in as login: the console's "Sign in with GitHub", the fake
// GitHub's authorization page, and back. It waits until the console shows ready, a JS condition.
func signInWithGitHub(t *testing.T, ctx context.Context, login, ready string) {
	t.Helper()
	button := chromedp.CSS(`form:has(input[name=login][value="` + login + `"]) button`)
	run(t, ctx, login+" goes to GitHub", chromedp.WaitVisible(chromedp.ID(`signin-github`)), chromedp.Click(chromedp.ID(`signin-github`)))
	run(t, ctx, login+" chooses their account on GitHub", chromedp.WaitVisible(button))
	run(t, ctx, login+" authorizes", chromedp.Click(button))
	waitThroughNavigations(t, ctx, login+" is back, signed in", ready)
}

// waitThroughNavigations waits until a JavaScript expression is true in whatever page the tab
// shows, while it goes through redirects and page loads (which end a waitJS).
func waitThroughNavigations(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		ok, err := chromedp.Run(tctx, chromedp.Evaluate[bool](`!!(`+expr+`)`))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			run(t, ctx, what, waitJS(expr)) // fails with the page's errors and a screenshot
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestConsoleGitHubSignInTeamFlow tries kiln as a new studio would, in Chromium: Ada signs in
// with GitHub, creates an organization, links the GitHub App and invites Grace; Grace, in her own
// browser, opens the link, signs in with GitHub, joins and builds; Ada demotes and then removes
// her, and Grace's console is signed out at once. A sign-in whose state the tab did not make is
// refused. No secret ever reaches the address bar.
func TestConsoleGitHubSignInTeamFlow(t *testing.T) {
	w := signUpWorld(t)
	shots := artifactsDir(t)
	ada := startBrowser(t)

	// A callback with a state this tab did not make is refused.
	run(t, ada, "a forged callback", chromedp.Navigate(w.URL()+"/console/signin/github?code=stolen&state=not-mine-0123456789"),
		waitJS(`document.querySelector('#errors')?.textContent.includes('not started in this browser tab')`), chromedp.WaitVisible(chromedp.ID(`signin-github`)))
	if at := value(t, ada, "read the location", chromedp.Location()); strings.Contains(at, "stolen") {
		t.Fatalf("the code stayed in the address: %s", at)
	}

	// Ada signs in: no organization yet, so the account page.
	run(t, ada, "open the console", chromedp.Navigate(w.URL()+"/console/"), chromedp.WaitVisible(chromedp.ID(`signin-github`)))
	screenshot(t, ada, shots, "signin-github")
	signInWithGitHub(t, ada, "ada", `document.getElementById('create-organization') !== null`)
	screenshot(t, ada, shots, "account-new")
	if at := value(t, ada, "read the location", chromedp.Location()); at != w.URL()+"/console/account" {
		t.Fatalf("after sign-in the console is at %s", at)
	}
	if stored := value(t, ada, "read the session", chromedp.Evaluate[string](`sessionStorage.getItem('kiln.token')`)); !strings.HasPrefix(stored, "ksess_") {
		t.Fatalf("the console keeps %q, want a session", stored)
	}
	run(t, ada, "create an organization", chromedp.SendKeys(chromedp.CSS(`#create-organization input[name=name]`), "Analytical Games"),
		chromedp.Click(chromedp.CSS(`#create-organization button[type=submit]`)), chromedp.WaitVisible(chromedp.ID(`#link-github`)),
		waitJS(`document.getElementById('who').textContent.includes('Analytical Games')`))

	// She links the GitHub App, then invites Grace.
	linkGitHubInConsole(t, ada, w, w.gh.InstallCode("ada", testInstallation))
	run(t, ada, "invite Grace", chromedp.SendKeys(chromedp.CSS(`#invite input[name=email]`), "grace@studio.example"),
		chromedp.SetValue(chromedp.CSS(`#invite select[name=role]`), "admin"),
		chromedp.Click(chromedp.CSS(`#invite button[type=submit]`)), chromedp.WaitVisible(chromedp.ID(`invite-link`)))
	link := value(t, ada, "read the link", chromedp.Text(chromedp.ID(`invite-link`)))

	// Grace, in her own browser, opens the link, signs in with GitHub and joins.
	grace := startBrowser(t)
	// The page draws its heading once its script has read the invitation: wait for it before
	// the page is checked.
	run(t, grace, "open the invitation", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS(`h1`)))
	screenshot(t, grace, shots, "invitation-signin")
	signInWithGitHub(t, grace, "grace", `document.getElementById('accept-submit') !== null`)
	if at := value(t, grace, "read the location", chromedp.Location()); strings.Contains(at, "kinv_") || strings.Contains(at, "code=") {
		t.Fatalf("a secret in the address: %s", at)
	}
	screenshot(t, grace, shots, "invitation-join")
	run(t, grace, "join", chromedp.Click(chromedp.ID(`accept-submit`)), chromedp.WaitVisible(chromedp.ID(`#builds`)),
		waitJS(`document.getElementById('who').textContent.includes('Grace Hopper · Analytical Games · admin')`))

	// Grace adds the project and a setting, and builds.
	run(t, grace, "add the project", chromedp.Click(chromedp.CSS(`nav a[href="/console/projects"]`)), chromedp.WaitVisible(chromedp.ID(`#add-repo`)),
		chromedp.SendKeys(chromedp.CSS(`#add-repo input[name=name]`), "Shooter"), chromedp.SetValue(chromedp.CSS(`#add-repo select[name=repoFullName]`), "studio/shooter"),
		chromedp.Click(chromedp.CSS(`#add-repo button[type=submit]`)), chromedp.WaitVisible(chromedp.ID(`#settings`)))
	run(t, grace, "add a setting", chromedp.Click(chromedp.CSS(`form[aria-label="New build setting"] button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`[data-setting]`)))
	run(t, grace, "build", chromedp.Click(chromedp.CSS(`[data-setting] form button[type=submit]`)), chromedp.WaitVisible(chromedp.ID(`#log`)),
		waitJS(`document.querySelector('h1 .status')?.textContent === 'complete'`))
	screenshot(t, grace, shots, "build-by-invited")

	// Ada demotes Grace to viewer, then removes her; Grace's console is signed out at once.
	run(t, ada, "open the members", chromedp.Navigate(w.URL()+"/console/organization"), chromedp.WaitVisible(chromedp.CSS(`select[data-member]:not([disabled])`)))
	graceID := value(t, ada, "find Grace", chromedp.Evaluate[string](`[...document.querySelectorAll('select[data-member]')].find(s => s.closest('tr').textContent.includes('grace@studio.example')).dataset.member`))
	run(t, ada, "demote Grace", chromedp.SetValue(chromedp.CSS(`select[data-member="`+graceID+`"]`), "viewer"),
		waitJS(`document.querySelector('select[data-member="`+graceID+`"]')?.value === 'viewer' && !document.querySelector('select[data-member="`+graceID+`"]').disabled`))
	run(t, grace, "Grace sees herself a viewer", chromedp.Navigate(w.URL()+"/console/"), waitJS(`document.getElementById('who').textContent.includes('· viewer')`))
	run(t, ada, "remove Grace", chromedp.Click(chromedp.ID(`remove-`+graceID)), chromedp.WaitVisible(chromedp.ID(`remove-`+graceID+`-yes`)),
		chromedp.Click(chromedp.ID(`remove-`+graceID+`-yes`)), waitJS(`document.querySelector('select[data-member="`+graceID+`"]') === null && document.querySelector('#members') !== null`))
	screenshot(t, ada, shots, "members-after-removal")
	run(t, grace, "Grace is signed out", chromedp.Navigate(w.URL()+"/console/projects"), chromedp.WaitVisible(chromedp.ID(`signin-github`)),
		waitJS(`document.querySelector('#errors')?.textContent.includes('invalid_token')`))

	// Ada's account page lists her session; signing out ends it.
	run(t, ada, "open the account", chromedp.Click(chromedp.ID(`account`)), chromedp.WaitVisible(chromedp.CSS(`#sessions tbody tr`)))
	screenshot(t, ada, shots, "account")
	session := value(t, ada, "read the session", chromedp.Evaluate[string](`sessionStorage.getItem('kiln.token')`))
	run(t, ada, "sign out", chromedp.Click(chromedp.ID(`signout`)), chromedp.WaitVisible(chromedp.ID(`signin-github`)))
	wantError(t, w.do(t, "GET", "/auth/me", session, nil), 401, "invalid_token")
}

// TestConsoleSwitchesOrganizations: a person who belongs to two organizations switches between
// them on the account page, and signs out a session of theirs opened elsewhere.
func TestConsoleSwitchesOrganizations(t *testing.T) {
	w := signUpWorld(t)
	shots := artifactsDir(t)
	ctx := startBrowser(t)
	run(t, ctx, "open the console", chromedp.Navigate(w.URL()+"/console/"))
	signInWithGitHub(t, ctx, "ada", `document.getElementById('create-organization') !== null`)
	for _, name := range []string{"Studio A", "Studio B"} {
		run(t, ctx, "create "+name, chromedp.Navigate(w.URL()+"/console/account"), chromedp.WaitVisible(chromedp.ID(`create-organization`)),
			chromedp.SendKeys(chromedp.CSS(`#create-organization input[name=name]`), name),
			chromedp.Click(chromedp.CSS(`#create-organization button[type=submit]`)),
			waitJS(`document.getElementById('who').textContent.includes('`+name+` · owner') && location.pathname === '/console/organization'`))
	}
	elsewhere := signIn(t, w, "ada")
	run(t, ctx, "open the account page", chromedp.Click(chromedp.ID(`account`)),
		waitJS(`document.querySelectorAll('#organizations tbody tr').length === 2 && document.querySelectorAll('#sessions tbody tr').length === 2`))
	if text := value(t, ctx, "read the link", chromedp.Text(chromedp.ID(`account`))); text != "Switch organization" {
		t.Errorf("the account link says %q", text)
	}
	screenshot(t, ctx, shots, "account-two-organizations")
	run(t, ctx, "switch to Studio A", chromedp.Click(chromedp.CSS(`button[aria-label="Switch to Studio A"]`)),
		waitJS(`document.getElementById('who').textContent.includes('Studio A · owner') && document.getElementById('builds') !== null`))
	run(t, ctx, "sign the other session out", chromedp.Click(chromedp.ID(`account`)), chromedp.WaitVisible(chromedp.CSS(`#sessions button.danger`)),
		chromedp.Click(chromedp.CSS(`#sessions button.danger`)), waitJS(`document.querySelectorAll('#sessions tbody tr').length === 1`))
	wantError(t, w.do(t, "GET", "/auth/me", elsewhere, nil), 401, "invalid_token")
}
