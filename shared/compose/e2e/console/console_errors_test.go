package console

import (
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestConsoleErrorsWhereTheEyeIs: an error answering a click at the bottom of a long page is
// brought into view and takes the focus (it is in the alert region too); the only owner is not
// offered "Leave", and is told why.
func TestConsoleErrorsWhereTheEyeIs(t *testing.T) {
	t.Parallel()
	ts := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, filepath.Join(t.TempDir(), "data")))
	ctx := e2e.StartBrowser(t)
	e2e.Run(t, ctx, "sign in", chromedp.Navigate(ts.URL()+"/console/organization"), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), ts.Token), chromedp.Click(chromedp.ID(`#signin`)), chromedp.WaitVisible(chromedp.ID(`#members`)))

	// The only owner: no Leave, a reason instead.
	if e2e.Value(t, ctx, "look for Leave", chromedp.Evaluate[bool](`document.getElementById('leave') !== null`)) {
		t.Error("the only owner is offered Leave, which the API refuses")
	}
	e2e.Run(t, ctx, "see why not", e2e.WaitJS(`document.getElementById('leave-refused')?.textContent.includes('only owner')`))

	// A webhook without events, asked for at the bottom of the page: refused, and the refusal is
	// in sight, focused.
	const form = `form[aria-label="New webhook"]`
	e2e.Run(t, ctx, "ask for a webhook without events",
		chromedp.SendKeys(chromedp.CSS(form+` input[name=url]`), "https://hooks.example.com/kiln"),
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('`+form+` input[type=checkbox]').forEach(c => { c.checked = false; })`),
		chromedp.Click(chromedp.CSS(form+` button[type=submit]`)),
		e2e.WaitJS(`document.querySelector('#errors .error')?.textContent.includes('events')`))
	if scrolled := e2e.Value(t, ctx, "read the scroll", chromedp.Evaluate[float64](`document.documentElement.scrollHeight - innerHeight`)); scrolled < 200 {
		t.Fatalf("the organization page is only %.0f px taller than the window: the test needs a long page", scrolled)
	}
	e2e.Run(t, ctx, "see the error in view, focused", e2e.WaitJS(`(() => { const e = document.querySelector('#errors .error'), r = e.getBoundingClientRect();
		return r.top >= 0 && r.bottom <= innerHeight && e.contains(document.activeElement); })()`))
	if live := e2e.Value(t, ctx, "read the alert region", chromedp.Evaluate[string](`document.getElementById('errors').getAttribute('role') + ' ' + document.getElementById('errors').getAttribute('aria-live')`)); live != "alert assertive" {
		t.Errorf("the error area is %q, want an assertive alert region", live)
	}
	e2e.Screenshot(t, ctx, e2e.ArtifactsDir(t), "error-in-view")
}
