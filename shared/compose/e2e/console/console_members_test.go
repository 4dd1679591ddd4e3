package console

import (
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestConsoleMembersAndAuditLog: in the browser an owner changes a member's role and removes
// another (each confirmed in place), reads the audit log filtered to member changes, and a member
// leaves the organization and is signed out.
func TestConsoleMembersAndAuditLog(t *testing.T) {
	t.Parallel()
	ts := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, filepath.Join(t.TempDir(), "data")))
	orgID := e2e.OrgOf(t, ts)
	artist := e2e.AddUser(t, ts, orgID, "viewer")
	contractor := e2e.AddUser(t, ts, orgID, "member")
	idOf := func(token string) string {
		return e2e.Field(t, ts.Do(t, "GET", "/auth/me", token, nil).Body, "user", "id")
	}
	artistID, contractorID := idOf(artist), idOf(contractor)
	shots := e2e.ArtifactsDir(t)

	ctx := e2e.StartBrowser(t)
	e2e.Run(t, ctx, "owner signs in", chromedp.Navigate(ts.URL()+"/console/organization"), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), ts.Token), chromedp.Click(chromedp.ID(`#signin`)),
		chromedp.WaitVisible(chromedp.CSS(`select[data-member="`+artistID+`"]`)))
	e2e.Screenshot(t, ctx, shots, "organization-members")
	e2e.Run(t, ctx, "make the artist a member",
		chromedp.SetValue(chromedp.CSS(`select[data-member="`+artistID+`"]`), "member"), // SetValue fires change
		e2e.WaitJS(`document.querySelector('select[data-member="`+artistID+`"]')?.value === 'member' && !document.querySelector('select[data-member="`+artistID+`"]').disabled`))
	if role := e2e.Field(t, ts.Do(t, "GET", "/auth/me", artist, nil).Body, "membership", "role"); role != "member" {
		t.Fatalf("after the console's change the artist is %q", role)
	}
	e2e.Run(t, ctx, "remove the contractor", chromedp.Click(chromedp.ID(`remove-`+contractorID)),
		chromedp.WaitVisible(chromedp.ID(`remove-`+contractorID+`-yes`)), chromedp.Click(chromedp.ID(`remove-`+contractorID+`-yes`)),
		e2e.WaitJS(`document.querySelector('select[data-member="`+contractorID+`"]') === null && document.querySelector('#members') !== null`))
	e2e.WantError(t, ts.Do(t, "GET", "/auth/me", contractor, nil), 401, "invalid_token")

	e2e.Run(t, ctx, "open the audit log", chromedp.Click(chromedp.ID(`audit-link`)),
		e2e.WaitJS(`document.querySelectorAll('#audit tbody tr').length >= 4`))
	e2e.Screenshot(t, ctx, shots, "audit-log")
	e2e.Run(t, ctx, "only member changes",
		chromedp.SetValue(chromedp.CSS(`select[name=kind]`), "member"),
		e2e.WaitJS(`location.search === '?kind=member' && [...document.querySelectorAll('#audit tbody tr td:nth-child(3)')].map(td => td.textContent).join(' ') === 'member.removed member.role_changed member.added member.added'`))

	// The artist leaves, and the console signs them out.
	tab := e2e.StartBrowser(t)
	e2e.Run(t, tab, "artist signs in", chromedp.Navigate(ts.URL()+"/console/organization"), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), artist), chromedp.Click(chromedp.ID(`#signin`)), chromedp.WaitVisible(chromedp.ID(`leave`)))
	e2e.Run(t, tab, "artist leaves", chromedp.Click(chromedp.ID(`leave`)), chromedp.WaitVisible(chromedp.ID(`leave-yes`)),
		chromedp.Click(chromedp.ID(`leave-yes`)), chromedp.WaitVisible(chromedp.ID(`#token`)))
	e2e.WantError(t, ts.Do(t, "GET", "/auth/me", artist, nil), 401, "invalid_token")
}
