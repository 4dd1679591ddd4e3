package console

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/kilnbuild/kiln/shared/app/apptest"
)

// signInWithGitHub signs a browser tab in as login: the console's "Sign in with GitHub", the fake
// GitHub's authorization page, and back. It waits until the console shows ready, a JS condition.
func signInWithGitHub(t *testing.T, ctx context.Context, login, ready string) {
	t.Helper()
	button := chromedp.CSS(`form:has(input[name=login][value="` + login + `"]) button`)
	apptest.Run(t, ctx, login+" goes to GitHub", chromedp.WaitVisible(chromedp.ID(`signin-github`)), chromedp.Click(chromedp.ID(`signin-github`)))
	apptest.Run(t, ctx, login+" chooses their account on GitHub", chromedp.WaitVisible(button))
	apptest.Run(t, ctx, login+" authorizes", chromedp.Click(button))
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
			apptest.Run(t, ctx, what, apptest.WaitJS(expr)) // fails with the page's errors and a screenshot
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
	t.Parallel()
	w := apptest.SignUpWorld(t, apptest.Serve)
	shots := apptest.ArtifactsDir(t)
	ada := apptest.StartBrowser(t)

	// A callback with a state this tab did not make is refused.
	apptest.Run(t, ada, "a forged callback", chromedp.Navigate(w.URL()+"/console/signin/github?code=stolen&state=not-mine-0123456789"),
		apptest.WaitJS(`document.querySelector('#errors')?.textContent.includes('not started in this browser tab')`), chromedp.WaitVisible(chromedp.ID(`signin-github`)))
	if at := apptest.Value(t, ada, "read the location", chromedp.Location()); strings.Contains(at, "stolen") {
		t.Fatalf("the code stayed in the address: %s", at)
	}

	// Ada signs in: no organization yet, so the account page.
	apptest.Run(t, ada, "open the console", chromedp.Navigate(w.URL()+"/console/"), chromedp.WaitVisible(chromedp.ID(`signin-github`)))
	apptest.Screenshot(t, ada, shots, "signin-github")
	signInWithGitHub(t, ada, "ada", `document.getElementById('create-organization') !== null`)
	apptest.Screenshot(t, ada, shots, "account-new")
	if at := apptest.Value(t, ada, "read the location", chromedp.Location()); at != w.URL()+"/console/account" {
		t.Fatalf("after sign-in the console is at %s", at)
	}
	if stored := apptest.Value(t, ada, "read the session", chromedp.Evaluate[string](`sessionStorage.getItem('kiln.token')`)); !strings.HasPrefix(stored, "ksess_") {
		t.Fatalf("the console keeps %q, want a session", stored)
	}
	apptest.Run(t, ada, "create an organization", chromedp.SendKeys(chromedp.CSS(`#create-organization input[name=name]`), "Analytical Games"),
		chromedp.Click(chromedp.CSS(`#create-organization button[type=submit]`)), chromedp.WaitVisible(chromedp.ID(`#link-github`)),
		apptest.WaitJS(`document.getElementById('who').textContent.includes('Analytical Games')`))

	// She links the GitHub App, then invites Grace.
	linkGitHubInConsole(t, ada, w, w.GitHub.InstallCode("ada", apptest.InstallationID))
	apptest.Run(t, ada, "invite Grace", chromedp.SendKeys(chromedp.CSS(`#invite input[name=email]`), "grace@studio.example"),
		chromedp.SetValue(chromedp.CSS(`#invite select[name=role]`), "admin"),
		chromedp.Click(chromedp.CSS(`#invite button[type=submit]`)), chromedp.WaitVisible(chromedp.ID(`invite-link`)))
	link := apptest.Value(t, ada, "read the link", chromedp.Text(chromedp.ID(`invite-link`)))

	// Grace, in her own browser, opens the link, signs in with GitHub and joins.
	grace := apptest.StartBrowser(t)
	// The page draws its heading once its script has read the invitation: wait for it before
	// the page is checked.
	apptest.Run(t, grace, "open the invitation", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS(`h1`)))
	apptest.Screenshot(t, grace, shots, "invitation-signin")
	signInWithGitHub(t, grace, "grace", `document.getElementById('accept-submit') !== null`)
	if at := apptest.Value(t, grace, "read the location", chromedp.Location()); strings.Contains(at, "kinv_") || strings.Contains(at, "code=") {
		t.Fatalf("a secret in the address: %s", at)
	}
	apptest.Screenshot(t, grace, shots, "invitation-join")
	apptest.Run(t, grace, "join", chromedp.Click(chromedp.ID(`accept-submit`)), chromedp.WaitVisible(chromedp.ID(`#builds`)),
		apptest.WaitJS(`document.getElementById('who').textContent.includes('Grace Hopper · Analytical Games · admin')`))

	// Grace adds the project and a setting, and builds.
	apptest.Run(t, grace, "add the project", chromedp.Click(chromedp.CSS(`nav a[href="/console/projects"]`)), chromedp.WaitVisible(chromedp.ID(`#add-repo`)),
		chromedp.SendKeys(chromedp.CSS(`#add-repo input[name=name]`), "Shooter"), chromedp.SetValue(chromedp.CSS(`#add-repo select[name=repoFullName]`), "studio/shooter"),
		chromedp.Click(chromedp.CSS(`#add-repo button[type=submit]`)), chromedp.WaitVisible(chromedp.ID(`#settings`)))
	apptest.Run(t, grace, "add a setting", chromedp.Click(chromedp.CSS(`form[aria-label="New build setting"] button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`[data-setting]`)))
	apptest.Run(t, grace, "build", chromedp.Click(chromedp.CSS(`[data-setting] form button[type=submit]`)), chromedp.WaitVisible(chromedp.ID(`#log`)),
		apptest.WaitJS(`document.querySelector('h1 .status')?.textContent === 'complete'`))
	apptest.Screenshot(t, grace, shots, "build-by-invited")

	// Ada demotes Grace to viewer, then removes her; Grace's console is signed out at once.
	apptest.Run(t, ada, "open the members", chromedp.Navigate(w.URL()+"/console/organization"), chromedp.WaitVisible(chromedp.CSS(`select[data-member]:not([disabled])`)))
	graceID := apptest.Value(t, ada, "find Grace", chromedp.Evaluate[string](`[...document.querySelectorAll('select[data-member]')].find(s => s.closest('tr').textContent.includes('grace@studio.example')).dataset.member`))
	apptest.Run(t, ada, "demote Grace", chromedp.SetValue(chromedp.CSS(`select[data-member="`+graceID+`"]`), "viewer"),
		apptest.WaitJS(`document.querySelector('select[data-member="`+graceID+`"]')?.value === 'viewer' && !document.querySelector('select[data-member="`+graceID+`"]').disabled`))
	apptest.Run(t, grace, "Grace sees herself a viewer", chromedp.Navigate(w.URL()+"/console/"), apptest.WaitJS(`document.getElementById('who').textContent.includes('· viewer')`))
	apptest.Run(t, ada, "remove Grace", chromedp.Click(chromedp.ID(`remove-`+graceID)), chromedp.WaitVisible(chromedp.ID(`remove-`+graceID+`-yes`)),
		chromedp.Click(chromedp.ID(`remove-`+graceID+`-yes`)), apptest.WaitJS(`document.querySelector('select[data-member="`+graceID+`"]') === null && document.querySelector('#members') !== null`))
	apptest.Screenshot(t, ada, shots, "members-after-removal")
	apptest.Run(t, grace, "Grace is signed out", chromedp.Navigate(w.URL()+"/console/projects"), chromedp.WaitVisible(chromedp.ID(`signin-github`)),
		apptest.WaitJS(`document.querySelector('#errors')?.textContent.includes('invalid_token')`))

	// Ada's account page lists her session; signing out ends it.
	apptest.Run(t, ada, "open the account", chromedp.Click(chromedp.ID(`account`)), chromedp.WaitVisible(chromedp.CSS(`#sessions tbody tr`)))
	apptest.Screenshot(t, ada, shots, "account")
	session := apptest.Value(t, ada, "read the session", chromedp.Evaluate[string](`sessionStorage.getItem('kiln.token')`))
	apptest.Run(t, ada, "sign out", chromedp.Click(chromedp.ID(`signout`)), chromedp.WaitVisible(chromedp.ID(`signin-github`)))
	apptest.WantError(t, w.Do(t, "GET", "/auth/me", session, nil), 401, "invalid_token")
}

// TestConsoleSwitchesOrganizations: a person who belongs to two organizations switches between
// them on the account page, and signs out a session of theirs opened elsewhere.
func TestConsoleSwitchesOrganizations(t *testing.T) {
	t.Parallel()
	w := apptest.SignUpWorld(t, apptest.Serve)
	shots := apptest.ArtifactsDir(t)
	ctx := apptest.StartBrowser(t)
	apptest.Run(t, ctx, "open the console", chromedp.Navigate(w.URL()+"/console/"))
	signInWithGitHub(t, ctx, "ada", `document.getElementById('create-organization') !== null`)
	for _, name := range []string{"Studio A", "Studio B"} {
		apptest.Run(t, ctx, "create "+name, chromedp.Navigate(w.URL()+"/console/account"), chromedp.WaitVisible(chromedp.ID(`create-organization`)),
			chromedp.SendKeys(chromedp.CSS(`#create-organization input[name=name]`), name),
			chromedp.Click(chromedp.CSS(`#create-organization button[type=submit]`)),
			apptest.WaitJS(`document.getElementById('who').textContent.includes('`+name+` · owner') && location.pathname === '/console/organization'`))
	}
	elsewhere := apptest.SignIn(t, w, "ada")
	apptest.Run(t, ctx, "open the account page", chromedp.Click(chromedp.ID(`account`)),
		apptest.WaitJS(`document.querySelectorAll('#organizations tbody tr').length === 2 && document.querySelectorAll('#sessions tbody tr').length === 2`))
	if text := apptest.Value(t, ctx, "read the link", chromedp.Text(chromedp.ID(`account`))); text != "Switch organization" {
		t.Errorf("the account link says %q", text)
	}
	apptest.Screenshot(t, ctx, shots, "account-two-organizations")
	apptest.Run(t, ctx, "switch to Studio A", chromedp.Click(chromedp.CSS(`button[aria-label="Switch to Studio A"]`)),
		apptest.WaitJS(`document.getElementById('who').textContent.includes('Studio A · owner') && document.getElementById('builds') !== null`))
	apptest.Run(t, ctx, "sign the other session out", chromedp.Click(chromedp.ID(`account`)), chromedp.WaitVisible(chromedp.CSS(`#sessions button.danger`)),
		chromedp.Click(chromedp.CSS(`#sessions button.danger`)), apptest.WaitJS(`document.querySelectorAll('#sessions tbody tr').length === 1`))
	apptest.WantError(t, w.Do(t, "GET", "/auth/me", elsewhere, nil), 401, "invalid_token")
}
