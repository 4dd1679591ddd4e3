package console

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestConsoleSettingsAndProgress: the project page shows each build setting's readable name, its
// id with a copy button, and its latest build (number, status, linked); a running build's page
// shows a progress bar with its stage, estimated from the setting's complete build.
func TestConsoleSettingsAndProgress(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	pid := w.AddShooter(t)
	dev := w.AddSetting(t, pid, map[string]any{"branch": "dev"})["id"].(string)
	main := w.AddSetting(t, pid, nil)["id"].(string)
	done := w.WaitEnded(t, w.Trigger(t, pid, dev, ""))
	card := func(id string) string { return `document.querySelector('[data-setting="` + id + `"]')` }

	ctx := e2e.StartBrowser(t)
	e2e.Run(t, ctx, "the project page", chromedp.Navigate(w.URL()+"/console/projects/"+pid), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), w.Token), chromedp.Click(chromedp.ID(`#signin`)),
		e2e.WaitJS(card(dev)+`?.querySelector('.setting-name')?.textContent === 'Linux/Shipping@dev'`),
		e2e.WaitJS(card(main)+`.querySelector('.setting-name').textContent === 'Linux/Shipping@main'`),
		e2e.WaitJS(card(dev)+`.querySelector('.setting-id code').textContent === '`+dev+`'`),
		e2e.WaitJS(card(dev)+`.querySelector('.last-build a').getAttribute('href') === '/console/builds/`+done["id"].(string)+`'`),
		e2e.WaitJS(card(dev)+`.querySelector('.last-build a').textContent === '#1' && `+card(dev)+`.querySelector('.last-build .status').textContent === 'complete'`),
		e2e.WaitJS(card(main)+`.querySelector('.last-build').textContent === 'No builds yet'`),
		chromedp.Click(`[data-setting="`+dev+`"] button[aria-label="Copy the id of Linux/Shipping@dev"]`),
		e2e.WaitJS(card(dev)+`.querySelector('.setting-id [role=status]').textContent !== ''`))
	e2e.Screenshot(t, ctx, e2e.ArtifactsDir(t), "project-settings")

	w.Shooter.Commit("dev", "Slow build", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=60\n"})
	id := w.Trigger(t, pid, dev, "")
	e2e.Run(t, ctx, "the running build's progress", chromedp.Navigate(w.URL()+"/console/builds/"+id),
		e2e.WaitJS(`document.querySelector('progress#progress')?.getAttribute('aria-valuenow') !== null`),
		e2e.WaitJS(`/^Stage: [a-z]+ · [0-9]+% · .*\(estimated from the last complete build\)$/.test(document.getElementById('progress-text')?.textContent ?? '')`))
	e2e.Screenshot(t, ctx, e2e.ArtifactsDir(t), "build-progress")
	if r := w.Do(t, "POST", "/builds/"+id+"/cancel", w.Token, nil); r.Status >= 300 {
		t.Fatalf("cancel: %d %s", r.Status, r.Raw)
	}
}
