package app

import (
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleMembersAndAuditLog: in the browser an owner changes a member's role and removes
// another (each confirmed in place), reads the audit log filtered to member changes, and a member
// leaves the organization and is signed out.
func TestConsoleMembersAndAuditLog(t *testing.T) {
	ts := startService(t, testConfig(t, filepath.Join(t.TempDir(), "data")))
	orgID := orgOf(t, ts)
	artist := addUser(t, ts, orgID, "viewer")
	contractor := addUser(t, ts, orgID, "member")
	idOf := func(token string) string { return field(t, ts.do(t, "GET", "/auth/me", token, nil).Body, "user", "id") }
	artistID, contractorID := idOf(artist), idOf(contractor)
	shots := artifactsDir(t)

	ctx := startBrowser(t)
	run(t, ctx, "owner signs in", chromedp.Navigate(ts.URL()+"/console/organization"), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), ts.token), chromedp.Click(chromedp.ID(`#signin`)),
		chromedp.WaitVisible(chromedp.CSS(`select[data-member="`+artistID+`"]`)))
	screenshot(t, ctx, shots, "organization-members")
	run(t, ctx, "make the artist a member",
		chromedp.SetValue(chromedp.CSS(`select[data-member="`+artistID+`"]`), "member"), // SetValue fires change
		waitJS(`document.querySelector('select[data-member="`+artistID+`"]')?.value === 'member' && !document.querySelector('select[data-member="`+artistID+`"]').disabled`))
	if role := field(t, ts.do(t, "GET", "/auth/me", artist, nil).Body, "membership", "role"); role != "member" {
		t.Fatalf("after the console's change the artist is %q", role)
	}
	run(t, ctx, "remove the contractor", chromedp.Click(chromedp.ID(`remove-`+contractorID)),
		chromedp.WaitVisible(chromedp.ID(`remove-`+contractorID+`-yes`)), chromedp.Click(chromedp.ID(`remove-`+contractorID+`-yes`)),
		waitJS(`document.querySelector('select[data-member="`+contractorID+`"]') === null && document.querySelector('#members') !== null`))
	wantError(t, ts.do(t, "GET", "/auth/me", contractor, nil), 401, "invalid_token")

	run(t, ctx, "open the audit log", chromedp.Click(chromedp.ID(`audit-link`)),
		waitJS(`document.querySelectorAll('#audit tbody tr').length >= 4`))
	screenshot(t, ctx, shots, "audit-log")
	run(t, ctx, "only member changes",
		chromedp.SetValue(chromedp.CSS(`select[name=kind]`), "member"),
		waitJS(`location.search === '?kind=member' && [...document.querySelectorAll('#audit tbody tr td:nth-child(3)')].map(td => td.textContent).join(' ') === 'member.removed member.role_changed member.added member.added'`))

	// The artist leaves, and the console signs them out.
	tab := startBrowser(t)
	run(t, tab, "artist signs in", chromedp.Navigate(ts.URL()+"/console/organization"), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), artist), chromedp.Click(chromedp.ID(`#signin`)), chromedp.WaitVisible(chromedp.ID(`leave`)))
	run(t, tab, "artist leaves", chromedp.Click(chromedp.ID(`leave`)), chromedp.WaitVisible(chromedp.ID(`leave-yes`)),
		chromedp.Click(chromedp.ID(`leave-yes`)), chromedp.WaitVisible(chromedp.ID(`#token`)))
	wantError(t, ts.do(t, "GET", "/auth/me", artist, nil), 401, "invalid_token")
}
