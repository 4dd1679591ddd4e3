package console

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/kilnbuild/kiln/shared/app/apptest"
)

// TestConsoleInvitations: an owner invites from the organization page and gets the link once;
// the link, opened signed out, asks the name, shows the new member's token once and signs in with
// it. The secret leaves the address bar at once and never reaches the server's log.
func TestConsoleInvitations(t *testing.T) {
	t.Parallel()
	ts := apptest.StartService(t, apptest.Serve, apptest.NewConfig(t, filepath.Join(t.TempDir(), "data")))
	shots := apptest.ArtifactsDir(t)
	ctx := apptest.StartBrowser(t)
	apptest.Run(t, ctx, "sign in", chromedp.Navigate(ts.URL()+"/console/organization"), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), ts.Token), chromedp.Click(chromedp.ID(`#signin`)), chromedp.WaitVisible(chromedp.ID(`#invite`)))
	apptest.Run(t, ctx, "invite", chromedp.SendKeys(chromedp.CSS(`#invite input[name=email]`), "ada@studio.example"),
		chromedp.SetValue(chromedp.CSS(`#invite select[name=role]`), "admin"),
		chromedp.Click(chromedp.CSS(`#invite button[type=submit]`)), chromedp.WaitVisible(chromedp.ID(`#invite-link`)))
	link := apptest.Value(t, ctx, "read the link", chromedp.Text(chromedp.ID(`#invite-link`)))
	if !strings.HasPrefix(link, ts.URL()+"/console/invitations/accept#kinv_") {
		t.Fatalf("link %q", link)
	}
	apptest.Screenshot(t, ctx, shots, "organization-invited")
	apptest.Run(t, ctx, "see it pending", chromedp.Click(chromedp.CSS(`#invite + div button`)),
		apptest.WaitJS(`document.querySelector('#invitations tbody tr td')?.textContent === 'ada@studio.example'`))
	apptest.Screenshot(t, ctx, shots, "organization-invitations")

	// The invited person: another browser, signed out.
	tab := apptest.StartBrowser(t)
	apptest.Run(t, tab, "open the link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID(`#accept`)))
	if at := apptest.Value(t, tab, "read the location", chromedp.Location()); strings.Contains(at, "kinv_") {
		t.Fatalf("the secret stays in the address bar: %s", at)
	}
	apptest.Screenshot(t, tab, shots, "invitation-accept")
	apptest.Run(t, tab, "accept", apptest.WaitJS(`document.activeElement?.name === 'name'`), chromedp.KeyEvent("Ada Lovelace\r"),
		chromedp.WaitVisible(chromedp.ID(`#new-token`)))
	token := apptest.Value(t, tab, "read the token", chromedp.Text(chromedp.ID(`#new-token`)))
	if !apptest.TokenRe.MatchString(token) {
		t.Fatalf("token %q", token)
	}
	apptest.Screenshot(t, tab, shots, "invitation-accepted")
	apptest.Run(t, tab, "sign in with it", chromedp.Click(chromedp.ID(`#use-token`)),
		apptest.WaitJS(`document.getElementById('who')?.textContent.includes('Ada Lovelace') && document.getElementById('who')?.textContent.includes('admin')`))

	// The same link again: one refusal, shown with its request id.
	apptest.Run(t, tab, "open the link again", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID(`#accept`)),
		chromedp.SendKeys(chromedp.CSS(`#accept input`), "Someone\r"),
		apptest.WaitJS(`document.querySelector('#errors .error')?.textContent.includes('not_found')`))
	if strings.Contains(ts.Logs.String(), strings.TrimPrefix(link[strings.Index(link, "#"):], "#")) {
		t.Fatal("the invitation's secret reached the server's log")
	}
}
