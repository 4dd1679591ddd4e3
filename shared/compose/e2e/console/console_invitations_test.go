package console

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestConsoleInvitations: an owner invites from the organization page and gets the link once;
// the link, opened signed out, asks the name, shows the new member's token once and signs in with
// it. The secret leaves the address bar at once and never reaches the server's log.
func TestConsoleInvitations(t *testing.T) {
	t.Parallel()
	ts := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, filepath.Join(t.TempDir(), "data")))
	shots := e2e.ArtifactsDir(t)
	ctx := e2e.StartBrowser(t)
	e2e.Run(t, ctx, "sign in", chromedp.Navigate(ts.URL()+"/console/organization"), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), ts.Token), chromedp.Click(chromedp.ID(`#signin`)), chromedp.WaitVisible(chromedp.ID(`#invite`)))
	e2e.Run(t, ctx, "invite", chromedp.SendKeys(chromedp.CSS(`#invite input[name=email]`), "ada@studio.example"),
		chromedp.SetValue(chromedp.CSS(`#invite select[name=role]`), "admin"),
		chromedp.Click(chromedp.CSS(`#invite button[type=submit]`)), chromedp.WaitVisible(chromedp.ID(`#invite-link`)))
	link := e2e.Value(t, ctx, "read the link", chromedp.Text(chromedp.ID(`#invite-link`)))
	if !strings.HasPrefix(link, ts.URL()+"/console/invitations/accept#kinv_") {
		t.Fatalf("link %q", link)
	}
	e2e.Screenshot(t, ctx, shots, "organization-invited")
	e2e.Run(t, ctx, "see it pending", chromedp.Click(chromedp.CSS(`#invite + div button`)),
		e2e.WaitJS(`document.querySelector('#invitations tbody tr td')?.textContent === 'ada@studio.example'`))
	e2e.Screenshot(t, ctx, shots, "organization-invitations")

	// The invited person: another browser, signed out.
	tab := e2e.StartBrowser(t)
	e2e.Run(t, tab, "open the link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID(`#accept`)))
	if at := e2e.Value(t, tab, "read the location", chromedp.Location()); strings.Contains(at, "kinv_") {
		t.Fatalf("the secret stays in the address bar: %s", at)
	}
	e2e.Screenshot(t, tab, shots, "invitation-accept")
	e2e.Run(t, tab, "accept", e2e.WaitJS(`document.activeElement?.name === 'name'`), chromedp.KeyEvent("Ada Lovelace\r"),
		chromedp.WaitVisible(chromedp.ID(`#new-token`)))
	token := e2e.Value(t, tab, "read the token", chromedp.Text(chromedp.ID(`#new-token`)))
	if !e2e.TokenRe.MatchString(token) {
		t.Fatalf("token %q", token)
	}
	e2e.Screenshot(t, tab, shots, "invitation-accepted")
	e2e.Run(t, tab, "sign in with it", chromedp.Click(chromedp.ID(`#use-token`)),
		e2e.WaitJS(`document.getElementById('who')?.textContent.includes('Ada Lovelace') && document.getElementById('who')?.textContent.includes('admin')`))

	// The same link again: one refusal, shown with its request id.
	e2e.Run(t, tab, "open the link again", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID(`#accept`)),
		chromedp.SendKeys(chromedp.CSS(`#accept input`), "Someone\r"),
		e2e.WaitJS(`document.querySelector('#errors .error')?.textContent.includes('not_found')`))
	if strings.Contains(ts.Logs.String(), strings.TrimPrefix(link[strings.Index(link, "#"):], "#")) {
		t.Fatal("the invitation's secret reached the server's log")
	}
}
