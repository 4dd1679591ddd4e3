package console

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
)

// TestConsoleInBrowser drives the web console in headless Chromium against a real kiln serve
// with the fake GitHub and the stand-in engine: sign in with the owner token, link GitHub through
// the install flow, add a project and a build setting, trigger, watch the log grow, see the
// build complete, download its artifact (MD5 checked), see an API error with its request id, and
// cancel a slow build. Each page is saved as a screenshot.
func TestConsoleInBrowser(t *testing.T) {
	t.Parallel()
	ctx := e2e.StartBrowser(t)
	w := e2e.NewWorld(t, e2e.Serve, func(c *serve.Config) { c.GitHubClientID, c.GitHubClientSecret = "Iv1.test", "client-secret" })
	w.GitHub.ClientID, w.GitHub.ClientSecret = "Iv1.test", "client-secret"
	// Builds of main pause 1 s in each stage, so their log grows while the page watches; the
	// branch "slow" pauses long enough to be cancelled.
	w.Shooter.Commit("main", "Pace the build", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=1\n"})
	w.Shooter.Commit("slow", "Slow build", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=120\n"})
	shots := e2e.ArtifactsDir(t)
	t.Logf("screenshots in %s", shots)

	// A browser at the service's address lands on the console's sign-in.
	e2e.Run(t, ctx, "open the service", chromedp.Navigate(w.URL()+"/"), chromedp.WaitVisible(chromedp.ID(`#token`)))
	at := e2e.Value(t, ctx, "read the location", chromedp.Location())
	if at != w.URL()+"/console/" {
		t.Fatalf("/ led a browser to %s, want the console", at)
	}
	e2e.Screenshot(t, ctx, shots, "signin")
	// By keyboard: the token field has the focus; Enter signs in.
	e2e.Run(t, ctx, "sign in", e2e.WaitJS(`document.activeElement?.id === 'token'`),
		chromedp.KeyEvent(w.Token+"\r"),
		chromedp.WaitVisible(chromedp.ID(`#builds`)))
	stored := e2e.Value(t, ctx, "read storage", chromedp.Evaluate[string](`sessionStorage.getItem('kiln.token')`))
	cookies := e2e.Value(t, ctx, "read cookies", chromedp.Evaluate[string](`document.cookie`))
	at = e2e.Value(t, ctx, "read the location", chromedp.Location())
	if stored != w.Token || cookies != "" || strings.Contains(at, "kiln_") {
		t.Fatalf("the token should be in sessionStorage only: stored %q, cookies %q, location %q", stored, cookies, at)
	}

	// Link GitHub: the console asks for the install link; GitHub sends the installer back to the
	// callback (here: in a second tab), and the organization page notices.
	e2e.Run(t, ctx, "open the organization", chromedp.Click(chromedp.CSS(`nav a[href="/console/organization"]`)), chromedp.WaitVisible(chromedp.ID(`#link-github`)))
	w.GitHub.AuthorizeUser("code-1", "gho_installer", e2e.InstallationID)
	linkGitHubInConsole(t, ctx, w, "code-1")
	e2e.Screenshot(t, ctx, shots, "organization-linked")

	// Add the project and a setting.
	e2e.Run(t, ctx, "add the project", chromedp.Click(chromedp.CSS(`nav a[href="/console/projects"]`)), chromedp.WaitVisible(chromedp.ID(`#add-repo`)),
		chromedp.SendKeys(chromedp.CSS(`#add-repo input[name=name]`), "Shooter"), chromedp.SetValue(chromedp.CSS(`#add-repo select[name=repoFullName]`), "studio/shooter"),
		chromedp.Click(chromedp.CSS(`#add-repo button[type=submit]`)), chromedp.WaitVisible(chromedp.ID(`#settings`)))
	e2e.Screenshot(t, ctx, shots, "project-new")
	e2e.Run(t, ctx, "add a setting", chromedp.SetValue(chromedp.CSS(`form[aria-label="New build setting"] select[name=buildType]`), "Shipping"),
		chromedp.Click(chromedp.CSS(`form[aria-label="New build setting"] button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`[data-setting]`)))
	e2e.Screenshot(t, ctx, shots, "project")
	if title := e2e.Value(t, ctx, "read the project page's title", chromedp.Evaluate[string](`document.title`)); title != "Shooter · kiln" {
		t.Errorf("the project page's title is %q, want \"Shooter · kiln\"", title)
	}

	// An API error shows its message and request id.
	e2e.Run(t, ctx, "trigger a bad commit", chromedp.SendKeys(chromedp.CSS(`[data-setting] input[name=commit]`), "not-a-sha"),
		chromedp.Click(chromedp.CSS(`[data-setting] form button[type=submit]`)), e2e.WaitJS(`document.querySelector('#errors .rid')?.textContent.startsWith('request id: req_')`))
	shown := e2e.Value(t, ctx, "read the error", chromedp.Text(chromedp.ID(`#errors`)))
	if !strings.Contains(shown, "validation_failed") || !strings.Contains(shown, "commit") {
		t.Fatalf("error shown: %q", shown)
	}
	// The alert banner keeps its look: dark red on pale red.
	if c := e2e.Value(t, ctx, "read the error's colours", e2e.ColoursOf(`document.querySelector('#errors .error')`)); c.Color != "rgb(92, 11, 13)" || c.Background != "rgb(253, 238, 238)" {
		t.Errorf("the alert banner is drawn %s on %s, want rgb(92, 11, 13) on rgb(253, 238, 238)", c.Color, c.Background)
	}
	e2e.Screenshot(t, ctx, shots, "error")

	// Trigger; the log grows while the build runs; it completes.
	e2e.Run(t, ctx, "trigger", chromedp.Evaluate[chromedp.Void](`document.querySelector("[data-setting] input[name=commit]").value = ""`), chromedp.Click(chromedp.CSS(`[data-setting] form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID(`#log`)), e2e.WaitJS(`document.getElementById('log').dataset.lines > 0`))
	first := e2e.Value(t, ctx, "count log lines", chromedp.Evaluate[int](`Number(document.getElementById('log').dataset.lines)`))
	e2e.Run(t, ctx, "watch the log grow", e2e.WaitJS(`document.getElementById('log').dataset.lines > `+strconv.Itoa(first)))
	e2e.Run(t, ctx, "see it complete", e2e.WaitJS(`document.querySelector('h1 .status')?.textContent === 'complete'`), chromedp.WaitVisible(chromedp.ID(`#download`)),
		e2e.WaitJS(`document.getElementById('log-state').textContent.includes('ended')`))
	last := e2e.Value(t, ctx, "count log lines", chromedp.Evaluate[int](`Number(document.getElementById('log').dataset.lines)`))
	if last <= first {
		t.Fatalf("the log did not grow: %d then %d lines", first, last)
	}
	at = e2e.Value(t, ctx, "read the build's location", chromedp.Location())
	buildID := at[strings.LastIndex(at, "/")+1:]
	// The page names the build by its number in the project (the rejected trigger took none).
	e2e.Run(t, ctx, "see its number", e2e.WaitJS(`document.querySelector('h1').textContent.startsWith('Build #1 `+buildID+`')`))
	// The first build of its key starts cold, and says why.
	e2e.Run(t, ctx, "see it started cold", e2e.WaitJS(`document.getElementById('cache')?.textContent === 'Cold build — no build of this branch, platform and engine version has saved a cache yet'
		&& !document.getElementById('clean')`))
	e2e.Screenshot(t, ctx, shots, "build")
	if title := e2e.Value(t, ctx, "read the build page's title", chromedp.Evaluate[string](`document.title`)); !strings.HasPrefix(title, "Build #1 · Shooter · ") {
		t.Errorf("the build page's title is %q, want it to name the build and its project", title)
	}

	// Download, and check the file's MD5 against the API and the page.
	dl := w.Do(t, "GET", "/builds/"+buildID+"/download", w.Token, nil)
	md5Shown := e2e.Value(t, ctx, "read the MD5", chromedp.Text(chromedp.ID(`#md5`)))
	if md5Shown != e2e.Field(t, dl.Body, "checksumMd5") {
		t.Fatalf("page shows MD5 %q, API %q", md5Shown, e2e.Field(t, dl.Body, "checksumMd5"))
	}
	// The button names the file as it is saved.
	if label, want := e2e.Value(t, ctx, "read the download button", chromedp.Text(chromedp.ID(`#download`))), "Download "+e2e.Field(t, dl.Body, "fileName"); label != want {
		t.Errorf("the download button says %q, want %q", label, want)
	}
	if got := download(t, ctx, `#download`); got != md5Shown {
		t.Fatalf("downloaded file's MD5 %s, want %s", got, md5Shown)
	}

	// The builds list shows it.
	e2e.Run(t, ctx, "list the builds", chromedp.Click(chromedp.CSS(`nav a[href="/console/"]`)),
		e2e.WaitJS(`document.querySelector('tr[data-build="`+buildID+`"] .status')?.textContent === 'complete'`),
		e2e.WaitJS(`document.querySelector('tr[data-build="`+buildID+`"] a')?.textContent === '#1'`))
	e2e.Screenshot(t, ctx, shots, "builds")

	// A larger build of main: the size report compares it with the previous one.
	w.Shooter.Commit("main", "Bigger pak", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_PAK_MB=2\n"})
	e2e.Run(t, ctx, "trigger a bigger build", chromedp.Click(chromedp.CSS(`nav a[href="/console/projects"]`)), chromedp.WaitVisible(chromedp.CSS(`#projects a`)),
		chromedp.Click(chromedp.CSS(`#projects a`)), chromedp.WaitVisible(chromedp.CSS(`[data-setting]`)),
		chromedp.Click(chromedp.CSS(`[data-setting] form button[type=submit]`)), chromedp.WaitVisible(chromedp.ID(`#log`)),
		e2e.WaitJS(`document.querySelector('h1 .status')?.textContent === 'complete'`),
		e2e.WaitJS(`[...document.querySelectorAll('#size-diff tr')].some(r => r.textContent.includes('Shooter-Linux.pak') && r.textContent.includes('grew'))`))
	e2e.Screenshot(t, ctx, shots, "size-report")
	// The next build of main started warm from the first one's cache, linked.
	e2e.Run(t, ctx, "see it started warm", e2e.WaitJS(`document.getElementById('cache')?.textContent === 'Warm build — from build `+buildID+`'
		&& document.querySelector('#cache a')?.getAttribute('href') === '/console/builds/`+buildID+`'`))

	// Cancel a slow build.
	e2e.Run(t, ctx, "list the projects", chromedp.Click(chromedp.CSS(`nav a[href="/console/projects"]`)), chromedp.WaitVisible(chromedp.CSS(`#projects a`)))
	e2e.Screenshot(t, ctx, shots, "projects")
	e2e.Run(t, ctx, "open the project", chromedp.Click(chromedp.CSS(`#projects a`)), chromedp.WaitVisible(chromedp.CSS(`[data-setting]`)))
	// A clean build, asked for with the trigger form's checkbox, ignores the cache.
	e2e.Run(t, ctx, "trigger the slow branch, clean", chromedp.SendKeys(chromedp.CSS(`[data-setting] input[name=branch]`), "slow"),
		chromedp.Click(chromedp.CSS(`[data-setting] form input[name=clean]`)),
		chromedp.Click(chromedp.CSS(`[data-setting] form button[type=submit]`)), chromedp.WaitVisible(chromedp.ID(`#log`)),
		e2e.WaitJS(`document.querySelector('h1 .status')?.textContent === 'running'`), chromedp.WaitVisible(chromedp.ID(`#cancel`)),
		e2e.WaitJS(`document.getElementById('clean')?.textContent === 'Clean build' && document.getElementById('cache')?.textContent === 'Cold build — a clean build was asked for'`))
	at = e2e.Value(t, ctx, "read the clean build's location", chromedp.Location())
	if b := w.Do(t, "GET", "/builds/"+at[strings.LastIndex(at, "/")+1:], w.Token, nil); b.Body["clean"] != true {
		t.Fatalf("the build triggered with the clean box ticked: %v", b.Body)
	}
	e2e.Run(t, ctx, "cancel it", chromedp.Click(chromedp.ID(`#cancel`)), chromedp.WaitVisible(chromedp.ID(`#cancel-yes`)), chromedp.Click(chromedp.ID(`#cancel-yes`)),
		e2e.WaitJS(`document.getElementById('failure')?.textContent === 'cancelled'`))
	// The log ends with the error line saying why; it is readable on the log (WCAG AA, at least
	// 4.5:1), not drawn as the alert banner.
	const endLine = `[...document.querySelectorAll('#log span')].find(s => s.textContent.startsWith('kiln: build failed: cancelled'))`
	e2e.Run(t, ctx, "see the log's end line", e2e.WaitJS(endLine+` !== undefined`))
	if c := e2e.Value(t, ctx, "read the end line's colours", e2e.ColoursOf(endLine)); c.Ratio < 4.5 {
		t.Errorf("the log's error line is drawn %s on %s: contrast %.2f:1, want at least 4.5:1", c.Color, c.Background, c.Ratio)
	}
	e2e.Screenshot(t, ctx, shots, "build-cancelled")

	// The month's usage: the builds that ran counted their minutes, on Linux, against the plan.
	e2e.Run(t, ctx, "see the usage", chromedp.Click(chromedp.CSS(`nav a[href="/console/organization"]`)), chromedp.WaitVisible(chromedp.ID(`#usage`)),
		e2e.WaitJS(`(() => { const rows = [...document.querySelectorAll('#usage tbody tr')].map(r => [...r.children].map(c => c.textContent));
			const minutes = rows.find(r => r[0] === 'Build minutes'), linux = rows.find(r => r[0] === '· on Linux');
			return minutes && Number(minutes[1]) >= 2 && minutes[2] === 'unlimited' && linux && linux[1] === minutes[1]; })()`))
	// The build caches held now: main's newest (it replaced the first), under the default cap.
	e2e.Run(t, ctx, "see the build caches", e2e.WaitJS(`(() => { const r = [...document.querySelectorAll('#usage tbody tr')].map(r => [...r.children].map(c => c.textContent))
		.find(r => r[0] === 'Build caches (held now)');
		return r && / in 1 cache$/.test(r[1]) && r[2] === 'cap 100.0 GiB, oldest removed'; })()`))

	// A token for CI and an organization webhook, each secret shown once.
	e2e.Run(t, ctx, "create a token", chromedp.Click(chromedp.CSS(`nav a[href="/console/organization"]`)), chromedp.WaitVisible(chromedp.ID(`#members`)),
		chromedp.SendKeys(chromedp.CSS(`form[aria-label="New API token"] input[name=name]`), "ci"),
		chromedp.Click(chromedp.CSS(`form[aria-label="New API token"] button[type=submit]`)),
		e2e.WaitJS(`/^kiln_[0-9A-Za-z]{40}$/.test(document.getElementById('new-token')?.textContent)`),
		// The list shows it at once; the secret has its Copy button, which says what it did.
		e2e.WaitJS(`[...document.querySelectorAll('#tokens tbody td:first-child')].some(td => td.textContent === 'ci')`),
		chromedp.Click(chromedp.ID(`new-token-copy`)), e2e.WaitJS(`document.querySelector('#new-token-copy + [role=status]')?.textContent !== ''`))
	e2e.Run(t, ctx, "add a webhook", chromedp.SendKeys(chromedp.CSS(`form[aria-label="New webhook"] input[name=url]`), "https://hooks.example.com/kiln"),
		chromedp.Click(chromedp.CSS(`form[aria-label="New webhook"] button[type=submit]`)),
		e2e.WaitJS(`document.querySelector('#hooks-h ~ div .secret')?.textContent.startsWith('whsec_') && document.getElementById('new-webhook-secret-copy') !== null`))
	e2e.Screenshot(t, ctx, shots, "organization-secrets")
	e2e.Run(t, ctx, "see the webhook", chromedp.Click(chromedp.ID(`webhook-done`)),
		e2e.WaitJS(`[...document.querySelectorAll('.card h3')].some(h => h.textContent === 'https://hooks.example.com/kiln')`),
		chromedp.Click(chromedp.CSS(`.card details summary`)), e2e.WaitJS(`document.querySelector('.card details tbody tr') !== null`))
	// A Slack notification: its incoming-webhook URL is never shown again, only masked.
	e2e.Run(t, ctx, "add a Slack notification",
		chromedp.SendKeys(chromedp.CSS(`form[aria-label="New Slack or Discord notification"] input[name=url]`), "https://hooks.slack.com/services/T0/B0/chatSECRETtoken9Qz"),
		chromedp.Click(chromedp.CSS(`form[aria-label="New Slack or Discord notification"] button[type=submit]`)),
		e2e.WaitJS(`[...document.querySelectorAll('.card h3')].some(h => h.textContent === 'Slack · https://hooks.slack.com/…n9Qz')`),
		e2e.WaitJS(`!document.body.innerHTML.includes('chatSECRETtoken')`))
	e2e.Screenshot(t, ctx, shots, "organization")
}

// linkGitHubInConsole links the test installation from the organization page shown in ctx:
// one click on "Link GitHub" asks for the install link and takes the tab to GitHub; GitHub sends
// the installer back to the callback (code authorized for the installation), which answers a page
// leading back to the console, still signed in, where GitHub shows linked.
func linkGitHubInConsole(t *testing.T, ctx context.Context, w *e2e.World, code string) {
	t.Helper()
	e2e.Run(t, ctx, "go to GitHub", chromedp.Click(chromedp.ID(`#link-github`)))
	waitThroughNavigations(t, ctx, "be at GitHub", `location.href.startsWith('`+w.GitHub.WebURL()+`')`)
	install := e2e.Value(t, ctx, "read GitHub's address", chromedp.Location())
	u, err := url.Parse(install)
	if err != nil || u.Query().Get("state") == "" {
		t.Fatalf("install link %q", install)
	}
	callback := w.URL() + "/integrations/github/callback?" + url.Values{"state": {u.Query().Get("state")}, "code": {code},
		"installation_id": {w.Installation}, "setup_action": {"install"}}.Encode()
	e2e.Run(t, ctx, "come back from GitHub", chromedp.Navigate(callback))
	// The page may still be navigating (GitHub's page, the redirect): wait through them.
	waitThroughNavigations(t, ctx, "see the page after the install", `document.querySelector('h1')?.textContent === 'GitHub is linked' && document.querySelector('main a')?.getAttribute('href') === '/console/organization'`)
	e2e.Run(t, ctx, "back to the console", chromedp.Click(chromedp.CSS(`main a`)))
	waitThroughNavigations(t, ctx, "see GitHub linked", `document.getElementById('github-state')?.textContent === 'Linked to the GitHub account studio (installation `+w.Installation+`).'`)
}

// download clicks a download link and returns the MD5 of the file the browser saved.
func download(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	sum := md5.Sum(downloaded(t, ctx, sel))
	return hex.EncodeToString(sum[:])
}

// downloaded clicks a download link (or button) and returns the file the browser saved.
func downloaded(t *testing.T, ctx context.Context, sel string) []byte {
	t.Helper()
	dir := t.TempDir()
	tctx, cancel := context.WithTimeout(ctx, 40*time.Second)
	defer cancel()
	progress := chromedp.BrowserEvents(tctx, browser.DownloadProgress)
	events := true
	if _, err := chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &events}); err != nil {
		t.Fatalf("allow downloads: %v", err)
	}
	e2e.Run(t, ctx, "download", chromedp.Click(chromedp.CSS(sel)))
	guid := ""
	for ev, err := range progress {
		if err != nil {
			t.Fatalf("the download did not complete: %v", err)
		}
		if ev.State == browser.DownloadProgressStateCompleted {
			guid = ev.GUID
			break
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, guid))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestConsoleLinksGitHubByID: on a service without the GitHub App's OAuth client (one studio's
// own kiln, and make demo), the console links an installation by its id.
func TestConsoleLinksGitHubByID(t *testing.T) {
	t.Parallel()
	ctx := e2e.StartBrowser(t)
	w := e2e.NewWorld(t, e2e.Serve)
	e2e.Run(t, ctx, "sign in", chromedp.Navigate(w.URL()+"/console/organization"), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), w.Token), chromedp.Click(chromedp.ID(`#signin`)), chromedp.WaitVisible(chromedp.ID(`#link-by-id`)))
	e2e.Run(t, ctx, "link by id",
		chromedp.SendKeys(chromedp.CSS(`#link-by-id input`), w.Installation), chromedp.Click(chromedp.CSS(`#link-by-id button`)),
		// It names the installation's account, as GitHub says it.
		e2e.WaitJS(`document.getElementById('github-state')?.textContent === 'Linked to the GitHub account studio (installation `+w.Installation+`).'`))
	if r := w.Do(t, "GET", "/organizations/"+w.OrgID, w.Token, nil); e2e.Field(t, r.Body, "integrationSettings", "github", "installationId") != w.Installation {
		t.Fatalf("not linked: %s", r.Raw)
	}
}

// TestConsoleRedeploys: a complete build of a setting with auto deploy shows its delivery and
// offers "Deploy again", which delivers it once more.
func TestConsoleRedeploys(t *testing.T) {
	t.Parallel()
	ctx := e2e.StartBrowser(t)
	w, rc, id := e2e.DeliveredBuild(t)
	e2e.Run(t, ctx, "sign in", chromedp.Navigate(w.URL()+"/console/builds/"+id), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), w.Token), chromedp.Click(chromedp.ID(`#signin`)),
		e2e.WaitJS(`document.getElementById('facts')?.textContent.includes('succeeded')`), chromedp.WaitVisible(chromedp.ID(`#redeploy`)))
	e2e.Run(t, ctx, "deploy again", chromedp.Click(chromedp.ID(`#redeploy`)))
	w.WaitBuild(t, id, "delivered again", func(b map[string]any) bool { return len(rc.Got()) == 2 && b["autoDeployStatus"] == "succeeded" })
	e2e.Screenshot(t, ctx, e2e.ArtifactsDir(t), "build-redeployed")
}
