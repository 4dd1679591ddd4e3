package app

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleSettingsAndProgress: the project page shows each build setting's readable name, its
// id with a copy button, and its latest build (number, status, linked); a running build's page
// shows a progress bar with its stage, estimated from the setting's complete build.
func TestConsoleSettingsAndProgress(t *testing.T) {
	w := newWorld(t)
	pid := w.addShooter(t)
	dev := w.addSetting(t, pid, map[string]any{"branch": "dev"})["id"].(string)
	main := w.addSetting(t, pid, nil)["id"].(string)
	done := w.waitEnded(t, w.trigger(t, pid, dev, ""))
	card := func(id string) string { return `document.querySelector('[data-setting="` + id + `"]')` }

	ctx := startBrowser(t)
	run(t, ctx, "the project page", chromedp.Navigate(w.URL()+"/console/projects/"+pid), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), w.token), chromedp.Click(chromedp.ID(`#signin`)),
		waitJS(card(dev)+`?.querySelector('.setting-name')?.textContent === 'Linux/Shipping@dev'`),
		waitJS(card(main)+`.querySelector('.setting-name').textContent === 'Linux/Shipping@main'`),
		waitJS(card(dev)+`.querySelector('.setting-id code').textContent === '`+dev+`'`),
		waitJS(card(dev)+`.querySelector('.last-build a').getAttribute('href') === '/console/builds/`+done["id"].(string)+`'`),
		waitJS(card(dev)+`.querySelector('.last-build a').textContent === '#1' && `+card(dev)+`.querySelector('.last-build .status').textContent === 'complete'`),
		waitJS(card(main)+`.querySelector('.last-build').textContent === 'No builds yet'`),
		chromedp.Click(`[data-setting="`+dev+`"] button[aria-label="Copy the id of Linux/Shipping@dev"]`),
		waitJS(card(dev)+`.querySelector('.setting-id [role=status]').textContent !== ''`))
	screenshot(t, ctx, artifactsDir(t), "project-settings")

	w.shooter.Commit("dev", "Slow build", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=60\n"})
	id := w.trigger(t, pid, dev, "")
	run(t, ctx, "the running build's progress", chromedp.Navigate(w.URL()+"/console/builds/"+id),
		waitJS(`document.querySelector('progress#progress')?.getAttribute('aria-valuenow') !== null`),
		waitJS(`/^Stage: [a-z]+ · [0-9]+% · .*\(estimated from the last complete build\)$/.test(document.getElementById('progress-text')?.textContent ?? '')`))
	screenshot(t, ctx, artifactsDir(t), "build-progress")
	if r := w.do(t, "POST", "/builds/"+id+"/cancel", w.token, nil); r.Status >= 300 {
		t.Fatalf("cancel: %d %s", r.Status, r.Raw)
	}
}
