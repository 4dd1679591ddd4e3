package console

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestConsoleReruns: the page of an ended build says who triggered it and offers a member
// "Re-run", which queues a new build of the same commit and opens it; the new build's page links
// the original, and the builds list says who or what triggered each build and why one failed. A
// viewer gets no "Re-run".
func TestConsoleReruns(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, map[string]any{"branch": "dev"})["id"].(string)
	orig := w.WaitEnded(t, w.Trigger(t, pid, sid, ""))
	id := orig["id"].(string)
	owner := e2e.Field(t, w.Do(t, "GET", "/auth/me", w.Token, nil).Body, "user", "name")

	ctx := e2e.StartBrowser(t)
	e2e.Run(t, ctx, "sign in on the build", chromedp.Navigate(w.URL()+"/console/builds/"+id), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), w.Token), chromedp.Click(chromedp.ID(`#signin`)),
		e2e.WaitJS(`document.getElementById('trigger')?.textContent === `+jsQuoted(owner)), chromedp.WaitVisible(chromedp.ID(`#rerun`)))
	e2e.Run(t, ctx, "re-run it", chromedp.Click(chromedp.ID(`#rerun`)),
		e2e.WaitJS(`location.pathname !== '/console/builds/`+id+`' && document.getElementById('rerun-of')?.textContent === '`+id+`'`),
		e2e.WaitJS(`document.getElementById('trigger').textContent.startsWith('re-run by '+`+jsQuoted(owner)+`)`))
	again := strings.TrimPrefix(e2e.Value(t, ctx, "the new build's page", chromedp.Evaluate[string](`location.pathname`)), "/console/builds/")
	b := w.WaitEnded(t, again)
	if b["rerunOf"] != id || b["commit"] != orig["commit"] || b["branch"] != "dev" {
		t.Fatalf("the console's re-run: %v; want a re-run of %s at %v", b, id, orig["commit"])
	}
	e2e.Screenshot(t, ctx, e2e.ArtifactsDir(t), "build-rerun")

	// A failing build, to see its reason in the list.
	w.Shooter.Commit("broken", "Break the cook", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_FAIL=cook\n"})
	broken := w.AddSetting(t, pid, map[string]any{"branch": "broken"})["id"].(string)
	failed := w.WaitEnded(t, w.Trigger(t, pid, broken, ""))
	reason, _ := failed["failureReason"].(string)
	if failed["status"] != "failed" || reason == "" {
		t.Fatalf("the build whose cook fails: %v", failed)
	}
	e2e.Run(t, ctx, "the builds list", chromedp.Navigate(w.URL()+"/console/"),
		e2e.WaitJS(`document.querySelector('tr[data-build="`+again+`"] .trigger')?.textContent === 're-run by '+`+jsQuoted(owner)),
		e2e.WaitJS(`document.querySelector('tr[data-build="`+id+`"] .trigger')?.textContent === `+jsQuoted(owner)),
		e2e.WaitJS(`document.querySelector('tr[data-build="`+failed["id"].(string)+`"] .failure')?.textContent === `+jsQuoted(reason)))
	e2e.Screenshot(t, ctx, e2e.ArtifactsDir(t), "builds-triggers")

	viewer := e2e.AddUser(t, w.Server, w.OrgID, "viewer")
	tab := e2e.StartBrowser(t)
	e2e.Run(t, tab, "a viewer opens the build", chromedp.Navigate(w.URL()+"/console/builds/"+id), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), viewer), chromedp.Click(chromedp.ID(`#signin`)),
		e2e.WaitJS(`document.getElementById('trigger')?.textContent === `+jsQuoted(owner)),
		e2e.WaitJS(`document.querySelector('h1 .status')?.textContent === 'complete' && document.getElementById('rerun') === null`))
}

// jsQuoted is s as a JavaScript string literal.
func jsQuoted(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
