package console

import (
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/kilnbuild/kiln/shared/app/apptest"
)

// TestConsoleMembersAndAuditLog: in the browser an owner changes a member's role and removes
// another (each confirmed in place), reads the audit log filtered to member changes, and a member
// leaves the organization and is signed out.
func TestConsoleMembersAndAuditLog(t *testing.T) {
	t.Parallel()
	ts := apptest.StartService(t, apptest.Serve, apptest.NewConfig(t, filepath.Join(t.TempDir(), "data")))
	orgID := apptest.OrgOf(t, ts)
	artist := apptest.AddUser(t, ts, orgID, "viewer")
	contractor := apptest.AddUser(t, ts, orgID, "member")
	idOf := func(token string) string {
		return apptest.Field(t, ts.Do(t, "GET", "/auth/me", token, nil).Body, "user", "id")
	}
	artistID, contractorID := idOf(artist), idOf(contractor)
	shots := apptest.ArtifactsDir(t)

	ctx := apptest.StartBrowser(t)
	apptest.Run(t, ctx, "owner signs in", chromedp.Navigate(ts.URL()+"/console/organization"), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), ts.Token), chromedp.Click(chromedp.ID(`#signin`)),
		chromedp.WaitVisible(chromedp.CSS(`select[data-member="`+artistID+`"]`)))
	apptest.Screenshot(t, ctx, shots, "organization-members")
	apptest.Run(t, ctx, "make the artist a member",
		chromedp.SetValue(chromedp.CSS(`select[data-member="`+artistID+`"]`), "member"), // SetValue fires change
		apptest.WaitJS(`document.querySelector('select[data-member="`+artistID+`"]')?.value === 'member' && !document.querySelector('select[data-member="`+artistID+`"]').disabled`))
	if role := apptest.Field(t, ts.Do(t, "GET", "/auth/me", artist, nil).Body, "membership", "role"); role != "member" {
		t.Fatalf("after the console's change the artist is %q", role)
	}
	apptest.Run(t, ctx, "remove the contractor", chromedp.Click(chromedp.ID(`remove-`+contractorID)),
		chromedp.WaitVisible(chromedp.ID(`remove-`+contractorID+`-yes`)), chromedp.Click(chromedp.ID(`remove-`+contractorID+`-yes`)),
		apptest.WaitJS(`document.querySelector('select[data-member="`+contractorID+`"]') === null && document.querySelector('#members') !== null`))
	apptest.WantError(t, ts.Do(t, "GET", "/auth/me", contractor, nil), 401, "invalid_token")

	apptest.Run(t, ctx, "open the audit log", chromedp.Click(chromedp.ID(`audit-link`)),
		apptest.WaitJS(`document.querySelectorAll('#audit tbody tr').length >= 4`))
	apptest.Screenshot(t, ctx, shots, "audit-log")
	apptest.Run(t, ctx, "only member changes",
		chromedp.SetValue(chromedp.CSS(`select[name=kind]`), "member"),
		apptest.WaitJS(`location.search === '?kind=member' && [...document.querySelectorAll('#audit tbody tr td:nth-child(3)')].map(td => td.textContent).join(' ') === 'member.removed member.role_changed member.added member.added'`))

	// The artist leaves, and the console signs them out.
	tab := apptest.StartBrowser(t)
	apptest.Run(t, tab, "artist signs in", chromedp.Navigate(ts.URL()+"/console/organization"), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), artist), chromedp.Click(chromedp.ID(`#signin`)), chromedp.WaitVisible(chromedp.ID(`leave`)))
	apptest.Run(t, tab, "artist leaves", chromedp.Click(chromedp.ID(`leave`)), chromedp.WaitVisible(chromedp.ID(`leave-yes`)),
		chromedp.Click(chromedp.ID(`leave-yes`)), chromedp.WaitVisible(chromedp.ID(`#token`)))
	apptest.WantError(t, ts.Do(t, "GET", "/auth/me", artist, nil), 401, "invalid_token")
}
