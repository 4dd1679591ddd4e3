package app

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleReruns: the page of an ended build says who triggered it and offers a member
// "Re-run", which queues a new build of the same commit and opens it; the new build's page links
// the original, and the builds list says who or what triggered each build and why one failed. A
// viewer gets no "Re-run".
func TestConsoleReruns(t *testing.T) {
	w := newWorld(t)
	pid := w.addShooter(t)
	sid := w.addSetting(t, pid, map[string]any{"branch": "dev"})["id"].(string)
	orig := w.waitEnded(t, w.trigger(t, pid, sid, ""))
	id := orig["id"].(string)
	owner := field(t, w.do(t, "GET", "/auth/me", w.token, nil).Body, "user", "name")

	ctx := startBrowser(t)
	run(t, ctx, "sign in on the build", chromedp.Navigate(w.URL()+"/console/builds/"+id), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), w.token), chromedp.Click(chromedp.ID(`#signin`)),
		waitJS(`document.getElementById('trigger')?.textContent === `+jsQuoted(owner)), chromedp.WaitVisible(chromedp.ID(`#rerun`)))
	run(t, ctx, "re-run it", chromedp.Click(chromedp.ID(`#rerun`)),
		waitJS(`location.pathname !== '/console/builds/`+id+`' && document.getElementById('rerun-of')?.textContent === '`+id+`'`),
		waitJS(`document.getElementById('trigger').textContent.startsWith('re-run by '+`+jsQuoted(owner)+`)`))
	again := strings.TrimPrefix(value(t, ctx, "the new build's page", chromedp.Evaluate[string](`location.pathname`)), "/console/builds/")
	b := w.waitEnded(t, again)
	if b["rerunOf"] != id || b["commit"] != orig["commit"] || b["branch"] != "dev" {
		t.Fatalf("the console's re-run: %v; want a re-run of %s at %v", b, id, orig["commit"])
	}
	screenshot(t, ctx, artifactsDir(t), "build-rerun")

	// A failing build, to see its reason in the list.
	w.shooter.Commit("broken", "Break the cook", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_FAIL=cook\n"})
	broken := w.addSetting(t, pid, map[string]any{"branch": "broken"})["id"].(string)
	failed := w.waitEnded(t, w.trigger(t, pid, broken, ""))
	reason, _ := failed["failureReason"].(string)
	if failed["status"] != "failed" || reason == "" {
		t.Fatalf("the build whose cook fails: %v", failed)
	}
	run(t, ctx, "the builds list", chromedp.Navigate(w.URL()+"/console/"),
		waitJS(`document.querySelector('tr[data-build="`+again+`"] .trigger')?.textContent === 're-run by '+`+jsQuoted(owner)),
		waitJS(`document.querySelector('tr[data-build="`+id+`"] .trigger')?.textContent === `+jsQuoted(owner)),
		waitJS(`document.querySelector('tr[data-build="`+failed["id"].(string)+`"] .failure')?.textContent === `+jsQuoted(reason)))
	screenshot(t, ctx, artifactsDir(t), "builds-triggers")

	viewer := addUser(t, w.testService, w.orgID, "viewer")
	tab := startBrowser(t)
	run(t, tab, "a viewer opens the build", chromedp.Navigate(w.URL()+"/console/builds/"+id), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), viewer), chromedp.Click(chromedp.ID(`#signin`)),
		waitJS(`document.getElementById('trigger')?.textContent === `+jsQuoted(owner)),
		waitJS(`document.querySelector('h1 .status')?.textContent === 'complete' && document.getElementById('rerun') === null`))
}

// jsQuoted is s as a JavaScript string literal.
func jsQuoted(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
