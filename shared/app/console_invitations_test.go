package app

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleInvitations: an owner invites from the organization page and gets the link once;
// the link, opened signed out, asks the name, shows the new member's token once and signs in with
// it. The secret leaves the address bar at once and never reaches the server's log.
func TestConsoleInvitations(t *testing.T) {
	ts := startService(t, testConfig(t, filepath.Join(t.TempDir(), "data")))
	shots := artifactsDir(t)
	ctx := startBrowser(t)
	run(t, ctx, "sign in", chromedp.Navigate(ts.URL()+"/console/organization"), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), ts.token), chromedp.Click(chromedp.ID(`#signin`)), chromedp.WaitVisible(chromedp.ID(`#invite`)))
	run(t, ctx, "invite", chromedp.SendKeys(chromedp.CSS(`#invite input[name=email]`), "ada@studio.example"),
		chromedp.SetValue(chromedp.CSS(`#invite select[name=role]`), "admin"),
		chromedp.Click(chromedp.CSS(`#invite button[type=submit]`)), chromedp.WaitVisible(chromedp.ID(`#invite-link`)))
	link := value(t, ctx, "read the link", chromedp.Text(chromedp.ID(`#invite-link`)))
	if !strings.HasPrefix(link, ts.URL()+"/console/invitations/accept#kinv_") {
		t.Fatalf("link %q", link)
	}
	screenshot(t, ctx, shots, "organization-invited")
	run(t, ctx, "see it pending", chromedp.Click(chromedp.CSS(`#invite + div button`)),
		waitJS(`document.querySelector('#invitations tbody tr td')?.textContent === 'ada@studio.example'`))
	screenshot(t, ctx, shots, "organization-invitations")

	// The invited person: another browser, signed out.
	tab := startBrowser(t)
	run(t, tab, "open the link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID(`#accept`)))
	if at := value(t, tab, "read the location", chromedp.Location()); strings.Contains(at, "kinv_") {
		t.Fatalf("the secret stays in the address bar: %s", at)
	}
	screenshot(t, tab, shots, "invitation-accept")
	run(t, tab, "accept", waitJS(`document.activeElement?.name === 'name'`), chromedp.KeyEvent("Ada Lovelace\r"),
		chromedp.WaitVisible(chromedp.ID(`#new-token`)))
	token := value(t, tab, "read the token", chromedp.Text(chromedp.ID(`#new-token`)))
	if !tokenRe.MatchString(token) {
		t.Fatalf("token %q", token)
	}
	screenshot(t, tab, shots, "invitation-accepted")
	run(t, tab, "sign in with it", chromedp.Click(chromedp.ID(`#use-token`)),
		waitJS(`document.getElementById('who')?.textContent.includes('Ada Lovelace') && document.getElementById('who')?.textContent.includes('admin')`))

	// The same link again: one refusal, shown with its request id.
	run(t, tab, "open the link again", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID(`#accept`)),
		chromedp.SendKeys(chromedp.CSS(`#accept input`), "Someone\r"),
		waitJS(`document.querySelector('#errors .error')?.textContent.includes('not_found')`))
	if strings.Contains(ts.logs.String(), strings.TrimPrefix(link[strings.Index(link, "#"):], "#")) {
		t.Fatal("the invitation's secret reached the server's log")
	}
}
