package console

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestConsoleInvitations: an owner invites from the organization page and gets the link once;
// the link, opened signed out, says what it is (organization, inviter, email, role), asks the name, shows the new member's token once and signs in with
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
	// The pending list shows it at once, beside the link and its Copy button.
	e2e.Run(t, ctx, "see it pending", e2e.WaitJS(`document.querySelector('#invitations tbody tr td')?.textContent === 'ada@studio.example'
		&& document.getElementById('invite-link-copy') !== null`))
	e2e.Screenshot(t, ctx, shots, "organization-invitations")

	// What the link's secret opens, before it is used: the organization, inviter, email and role.
	secret := link[strings.Index(link, "#")+1:]
	if p := ts.Do(t, "POST", "/invitations/preview", "", map[string]any{"secret": secret}); p.Status != 200 ||
		e2e.Field(t, p.Body, "email") != "ada@studio.example" || e2e.Field(t, p.Body, "role") != "admin" {
		t.Fatalf("preview: %d %s", p.Status, p.Raw)
	}
	e2e.WantError(t, ts.Do(t, "POST", "/invitations/preview", "", map[string]any{"secret": "kinv_not-a-real-one"}), 404, "not_found")

	// The invited person: another browser, signed out.
	tab := e2e.StartBrowser(t)
	e2e.Run(t, tab, "open the link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID(`#accept`)))
	if at := e2e.Value(t, tab, "read the location", chromedp.Location()); strings.Contains(at, "kinv_") {
		t.Fatalf("the secret stays in the address bar: %s", at)
	}
	// The page says what the invitation is before anyone joins.
	me := ts.Do(t, "GET", "/auth/me", ts.Token, nil)
	org, inviter := e2e.Field(t, me.Body, "organization", "name"), e2e.Field(t, me.Body, "user", "name")
	about := e2e.Value(t, tab, "read the invitation", chromedp.Text(chromedp.ID(`#invitation`)))
	for _, want := range []string{org, inviter, "ada@studio.example", "admin"} {
		if !strings.Contains(about, want) {
			t.Errorf("the accept page says %q, want it to name %q", about, want)
		}
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

	// The same link again: used up, which the page says before anything is asked.
	e2e.Run(t, tab, "open the link again", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID(`#invitation-invalid`)))
	if e2e.Value(t, tab, "look for the form", chromedp.Evaluate[bool](`document.getElementById('accept') !== null`)) {
		t.Error("a used invitation still offers to join")
	}
	if strings.Contains(ts.Logs.String(), strings.TrimPrefix(link[strings.Index(link, "#"):], "#")) {
		t.Fatal("the invitation's secret reached the server's log")
	}
}
