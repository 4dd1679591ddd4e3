package console

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// signInWithGitHub signs a browser tab in as login: the console's "Sign in with GitHub", the fake
// GitHub's authorization page, and back. It waits until the console shows ready, a JS condition.
func signInWithGitHub(t *testing.T, ctx context.Context, login, ready string) {
	t.Helper()
	button := chromedp.CSS(`form:has(input[name=login][value="` + login + `"]) button`)
	e2e.Run(t, ctx, login+" goes to GitHub", chromedp.WaitVisible(chromedp.ID(`signin-github`)), chromedp.Click(chromedp.ID(`signin-github`)))
	e2e.Run(t, ctx, login+" chooses their account on GitHub", chromedp.WaitVisible(button))
	e2e.Run(t, ctx, login+" authorizes", chromedp.Click(button))
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
			e2e.Run(t, ctx, what, e2e.WaitJS(expr)) // fails with the page's errors and a screenshot
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
	w := e2e.SignUpWorld(t, e2e.Serve)
	shots := e2e.ArtifactsDir(t)
	ada := e2e.StartBrowser(t)

	// A callback with a state this tab did not make is refused.
	e2e.Run(t, ada, "a forged callback", chromedp.Navigate(w.URL()+"/console/signin/github?code=stolen&state=not-mine-0123456789"),
		e2e.WaitJS(`document.querySelector('#errors')?.textContent.includes('not started in this browser tab')`), chromedp.WaitVisible(chromedp.ID(`signin-github`)))
	if at := e2e.Value(t, ada, "read the location", chromedp.Location()); strings.Contains(at, "stolen") {
		t.Fatalf("the code stayed in the address: %s", at)
	}

	// Ada signs in: no organization yet, so the account page.
	e2e.Run(t, ada, "open the console", chromedp.Navigate(w.URL()+"/console/"), chromedp.WaitVisible(chromedp.ID(`signin-github`)))
	e2e.Screenshot(t, ada, shots, "signin-github")
	signInWithGitHub(t, ada, "ada", `document.getElementById('create-organization') !== null`)
	e2e.Screenshot(t, ada, shots, "account-new")
	if at := e2e.Value(t, ada, "read the location", chromedp.Location()); at != w.URL()+"/console/account" {
		t.Fatalf("after sign-in the console is at %s", at)
	}
	if stored := e2e.Value(t, ada, "read the session", chromedp.Evaluate[string](`sessionStorage.getItem('kiln.token')`)); !strings.HasPrefix(stored, "ksess_") {
		t.Fatalf("the console keeps %q, want a session", stored)
	}
	e2e.Run(t, ada, "create an organization", chromedp.SendKeys(chromedp.CSS(`#create-organization input[name=name]`), "Analytical Games"),
		chromedp.Click(chromedp.CSS(`#create-organization button[type=submit]`)), chromedp.WaitVisible(chromedp.ID(`#link-github`)),
		e2e.WaitJS(`document.getElementById('who').textContent.includes('Analytical Games')`))

	// A new organization is on the free plan: no Perforce form, the plan says why.
	e2e.Run(t, ada, "see the plan's Perforce", e2e.WaitJS(`document.getElementById('perforce-plan')?.textContent.includes('free plan')
		&& !document.querySelector('form[aria-label="Perforce credentials"]')`))

	// She links the GitHub App, then invites Grace.
	linkGitHubInConsole(t, ada, w, w.GitHub.InstallCode("ada", e2e.InstallationID))
	e2e.Run(t, ada, "invite Grace", chromedp.SendKeys(chromedp.CSS(`#invite input[name=email]`), "grace@studio.example"),
		chromedp.SetValue(chromedp.CSS(`#invite select[name=role]`), "admin"),
		chromedp.Click(chromedp.CSS(`#invite button[type=submit]`)), chromedp.WaitVisible(chromedp.ID(`invite-link`)))
	link := e2e.Value(t, ada, "read the link", chromedp.Text(chromedp.ID(`invite-link`)))

	// Opened by Ada, signed in as herself: the page says the invitation is for another email, before
	// any click, offers no Join, and offers to sign in as someone else.
	e2e.Run(t, ada, "open Grace's invitation as Ada", chromedp.Navigate(link),
		e2e.WaitJS(`document.getElementById('invitation-mismatch')?.textContent.includes('grace@studio.example') && !document.getElementById('accept-submit')
			&& document.getElementById('signin-other') !== null && document.getElementById('signed-in-as')?.textContent.includes('Ada Lovelace')`))

	// Grace, in her own browser, opens the link, signs in with GitHub and joins.
	grace := e2e.StartBrowser(t)
	graceNet := watchNetwork(t, grace)
	// The page draws its heading once its script has read the invitation: wait for it before
	// the page is checked.
	e2e.Run(t, grace, "open the invitation", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS(`h1`)))
	e2e.Screenshot(t, grace, shots, "invitation-signin")
	signInWithGitHub(t, grace, "grace", `document.getElementById('accept-submit') !== null`)
	if at := e2e.Value(t, grace, "read the location", chromedp.Location()); strings.Contains(at, "kinv_") || strings.Contains(at, "code=") {
		t.Fatalf("a secret in the address: %s", at)
	}
	// The page says what the invitation is and who she is signed in as, before she joins.
	e2e.Run(t, grace, "see what she joins", e2e.WaitJS(`(() => { const about = document.getElementById('invitation')?.textContent || '';
		return about.includes('Analytical Games') && about.includes('Ada Lovelace') && about.includes('grace@studio.example')
			&& document.getElementById('signed-in-as')?.textContent.includes('Grace Hopper <grace@studio.example>')
			&& document.getElementById('signin-other') !== null && !document.getElementById('invitation-mismatch'); })()`))
	e2e.Screenshot(t, grace, shots, "invitation-join")
	e2e.Run(t, grace, "join", chromedp.Click(chromedp.ID(`accept-submit`)), chromedp.WaitVisible(chromedp.ID(`#builds`)),
		e2e.WaitJS(`document.getElementById('who').textContent.includes('Grace Hopper · Analytical Games · admin')`))

	// Grace adds the project and a setting, and builds.
	e2e.Run(t, grace, "add the project", chromedp.Click(chromedp.CSS(`nav a[href="/console/projects"]`)), chromedp.WaitVisible(chromedp.ID(`#add-repo`)),
		chromedp.SendKeys(chromedp.CSS(`#add-repo input[name=name]`), "Shooter"), chromedp.SetValue(chromedp.CSS(`#add-repo select[name=repoFullName]`), "studio/shooter"),
		chromedp.Click(chromedp.CSS(`#add-repo button[type=submit]`)), chromedp.WaitVisible(chromedp.ID(`#settings`)))
	// Nor auto deploy, on the free plan.
	e2e.Run(t, grace, "see the plan's auto deploy", e2e.WaitJS(`document.querySelector('form[aria-label="New build setting"] .plan-note')?.textContent.includes('free plan')
		&& !document.querySelector('form[aria-label="New build setting"] input[name=uploadBuildUrl]')`))
	e2e.Run(t, grace, "add a setting", chromedp.Click(chromedp.CSS(`form[aria-label="New build setting"] button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`[data-setting]`)))
	e2e.Run(t, grace, "build", chromedp.Click(chromedp.CSS(`[data-setting] form button[type=submit]`)), chromedp.WaitVisible(chromedp.ID(`#log`)),
		e2e.WaitJS(`document.querySelector('h1 .status')?.textContent === 'complete'`))
	e2e.Screenshot(t, grace, shots, "build-by-invited")
	// The free plan's one project is used: the projects page offers no form it would refuse.
	e2e.Run(t, grace, "see the plan's projects", chromedp.Click(chromedp.CSS(`nav a[href="/console/projects"]`)),
		e2e.WaitJS(`document.getElementById('projects-plan')?.textContent.includes('free plan allows 1 project') && !document.getElementById('add-repo')`))
	// The build page followed the build over the live events, connected with her session.
	if !graceNet.sent(`40{"token":"ksess_`) || !graceNet.received(`42["build:status"`) {
		t.Errorf("the build page did not follow the build live with Grace's session; sent %q", graceNet.frames(false))
	}

	// Ada demotes Grace to viewer, then removes her; Grace's console signs her out.
	e2e.Run(t, ada, "open the members", chromedp.Navigate(w.URL()+"/console/organization"), chromedp.WaitVisible(chromedp.CSS(`select[data-member]:not([disabled])`)))
	graceID := e2e.Value(t, ada, "find Grace", chromedp.Evaluate[string](`[...document.querySelectorAll('select[data-member]')].find(s => s.closest('tr').textContent.includes('grace@studio.example')).dataset.member`))
	e2e.Run(t, ada, "demote Grace", chromedp.SetValue(chromedp.CSS(`select[data-member="`+graceID+`"]`), "viewer"),
		e2e.WaitJS(`document.querySelector('select[data-member="`+graceID+`"]')?.value === 'viewer' && !document.querySelector('select[data-member="`+graceID+`"]').disabled`))
	e2e.Run(t, grace, "Grace sees herself a viewer", chromedp.Navigate(w.URL()+"/console/"), e2e.WaitJS(`document.getElementById('who').textContent.includes('· viewer')`))
	e2e.Run(t, ada, "remove Grace", chromedp.Click(chromedp.ID(`remove-`+graceID)), chromedp.WaitVisible(chromedp.ID(`remove-`+graceID+`-yes`)),
		chromedp.Click(chromedp.ID(`remove-`+graceID+`-yes`)), e2e.WaitJS(`document.querySelector('select[data-member="`+graceID+`"]') === null && document.querySelector('#members') !== null`))
	e2e.Screenshot(t, ada, shots, "members-after-removal")
	// Her open builds list signs her out at its next refresh, saying why (a page she opens instead
	// would find no token left and show the sign-in alone: the list is the one to watch).
	e2e.Run(t, grace, "Grace is signed out", chromedp.WaitVisible(chromedp.ID(`signin-github`)),
		e2e.WaitJS(`document.querySelector('#errors')?.textContent.includes('invalid_token')`))
	e2e.Run(t, grace, "and stays signed out", chromedp.Navigate(w.URL()+"/console/projects"), chromedp.WaitVisible(chromedp.ID(`signin-github`)))

	// Ada's account page lists her session; signing out ends it.
	e2e.Run(t, ada, "open the account", chromedp.Click(chromedp.ID(`account`)), chromedp.WaitVisible(chromedp.CSS(`#sessions tbody tr`)))
	e2e.Screenshot(t, ada, shots, "account")
	session := e2e.Value(t, ada, "read the session", chromedp.Evaluate[string](`sessionStorage.getItem('kiln.token')`))
	e2e.Run(t, ada, "sign out", chromedp.Click(chromedp.ID(`signout`)), chromedp.WaitVisible(chromedp.ID(`signin-github`)))
	e2e.WantError(t, w.Do(t, "GET", "/auth/me", session, nil), 401, "invalid_token")
}

// TestConsoleSwitchesOrganizations: a person who belongs to two organizations switches between
// them on the account page, and signs out a session of theirs opened elsewhere.
func TestConsoleSwitchesOrganizations(t *testing.T) {
	t.Parallel()
	w := e2e.SignUpWorld(t, e2e.Serve)
	shots := e2e.ArtifactsDir(t)
	ctx := e2e.StartBrowser(t)
	e2e.Run(t, ctx, "open the console", chromedp.Navigate(w.URL()+"/console/"))
	signInWithGitHub(t, ctx, "ada", `document.getElementById('create-organization') !== null`)
	for _, name := range []string{"Studio A", "Studio B"} {
		e2e.Run(t, ctx, "create "+name, chromedp.Navigate(w.URL()+"/console/account"), chromedp.WaitVisible(chromedp.ID(`create-organization`)),
			chromedp.SendKeys(chromedp.CSS(`#create-organization input[name=name]`), name),
			chromedp.Click(chromedp.CSS(`#create-organization button[type=submit]`)),
			e2e.WaitJS(`document.getElementById('who').textContent.includes('`+name+` · owner') && location.pathname === '/console/organization'`))
	}
	elsewhere := e2e.SignIn(t, w, "ada")
	e2e.Run(t, ctx, "open the account page", chromedp.Click(chromedp.ID(`account`)),
		e2e.WaitJS(`document.querySelectorAll('#organizations tbody tr').length === 2 && document.querySelectorAll('#sessions tbody tr').length === 2`))
	if text := e2e.Value(t, ctx, "read the link", chromedp.Text(chromedp.ID(`account`))); text != "Switch organization" {
		t.Errorf("the account link says %q", text)
	}
	e2e.Screenshot(t, ctx, shots, "account-two-organizations")
	e2e.Run(t, ctx, "switch to Studio A", chromedp.Click(chromedp.CSS(`button[aria-label="Switch to Studio A"]`)),
		e2e.WaitJS(`document.getElementById('who').textContent.includes('Studio A · owner') && document.getElementById('builds') !== null`))
	e2e.Run(t, ctx, "sign the other session out", chromedp.Click(chromedp.ID(`account`)), chromedp.WaitVisible(chromedp.CSS(`#sessions button.danger`)),
		chromedp.Click(chromedp.CSS(`#sessions button.danger`)), e2e.WaitJS(`document.querySelectorAll('#sessions tbody tr').length === 1`))
	e2e.WantError(t, w.Do(t, "GET", "/auth/me", elsewhere, nil), 401, "invalid_token")
}
