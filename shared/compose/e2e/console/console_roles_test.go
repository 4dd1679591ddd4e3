package console

import (
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestConsoleRoles: the console offers a viewer nothing its role may not do (no trigger, no
// setting forms, no cancel, no GitHub or Perforce or webhook administration), and a member no
// organization administration, while both read builds, projects, members and their own tokens.
func TestConsoleRoles(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	w.Shooter.Commit("main", "Slow build", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=120\n"})
	projectID := w.AddShooter(t)
	setting := w.AddSetting(t, projectID, nil)
	r := w.Do(t, "POST", "/projects/"+projectID+"/build-settings/"+setting["id"].(string)+"/trigger", w.Token, map[string]any{})
	if r.Status != http.StatusAccepted {
		t.Fatalf("trigger: %d %s", r.Status, r.Raw)
	}
	buildID := e2e.Field(t, r.Body, "buildId")
	shots := e2e.ArtifactsDir(t)
	absent := func(sel string) chromedp.Action[chromedp.Void] {
		return e2e.WaitJS(`document.querySelector('` + sel + `') === null`)
	}

	for _, role := range []string{"viewer", "member"} {
		token := e2e.AddUser(t, w.Server, w.OrgID, role)
		tab := e2e.StartBrowser(t) // a browser of its own: a background tab of headless Chromium does not paint
		e2e.Run(t, tab, role+" signs in", chromedp.Navigate(w.URL()+"/console/"), chromedp.WaitVisible(chromedp.ID(`#token`)),
			chromedp.SendKeys(chromedp.ID(`#token`), token), chromedp.Click(chromedp.ID(`#signin`)),
			e2e.WaitJS(`document.querySelector('tr[data-build="`+buildID+`"]') !== null`))
		if role == "viewer" {
			// The list follows new builds without a reload, and filters by status.
			r := w.Do(t, "POST", "/projects/"+projectID+"/build-settings/"+setting["id"].(string)+"/trigger", w.Token, map[string]any{"branch": "dev"})
			if r.Status != http.StatusAccepted {
				t.Fatalf("trigger: %d %s", r.Status, r.Raw)
			}
			e2e.Run(t, tab, "see the new build appear", e2e.WaitJS(`document.querySelector('tr[data-build="`+e2e.Field(t, r.Body, "buildId")+`"]') !== null`))
			e2e.Run(t, tab, "filter by status", chromedp.SetValue(chromedp.CSS(`select[name=status]`), "running"),
				chromedp.Evaluate[chromedp.Void](`document.querySelector('select[name=status]').dispatchEvent(new Event('change', {bubbles: true}))`),
				e2e.WaitJS(`location.search === '?status=running' && [...document.querySelectorAll('tr[data-build] .status')].every(s => s.textContent === 'running') && document.querySelector('tr[data-build="`+buildID+`"]') !== null && document.querySelector('tr[data-build="`+e2e.Field(t, r.Body, "buildId")+`"]') === null`))
			e2e.Screenshot(t, tab, shots, "builds-filtered")
		}

		e2e.Run(t, tab, role+" opens the running build", chromedp.Navigate(w.URL()+"/console/builds/"+buildID), // the list redraws itself: no click on it
			e2e.WaitJS(`document.querySelector('h1 .status')?.textContent === 'running'`), chromedp.WaitVisible(chromedp.ID(`#log`)))
		if role == "viewer" {
			e2e.Run(t, tab, "no cancel for a viewer", absent(`#cancel`))
		} else {
			e2e.Run(t, tab, "cancel for a member", chromedp.WaitVisible(chromedp.ID(`#cancel`)))
		}

		e2e.Run(t, tab, role+" opens the project", chromedp.Click(chromedp.CSS(`#facts a`)), chromedp.WaitVisible(chromedp.CSS(`[data-setting]`)))
		if role == "viewer" {
			e2e.Run(t, tab, "no project forms for a viewer", absent(`[data-setting] form`), absent(`form[aria-label="New build setting"]`), absent(`#edit-project`))
		} else {
			e2e.Run(t, tab, "project forms for a member", chromedp.WaitReady(chromedp.CSS(`[data-setting] form`)),
				chromedp.WaitReady(chromedp.CSS(`form[aria-label="New build setting"]`)))
		}
		e2e.Screenshot(t, tab, shots, role+"-project")

		e2e.Run(t, tab, role+" opens the organization", chromedp.Click(chromedp.CSS(`nav a[href="/console/organization"]`)),
			chromedp.WaitVisible(chromedp.ID(`#members`)), chromedp.WaitVisible(chromedp.ID(`#tokens`)),
			absent(`#link-github`), absent(`#github button`), absent(`form[aria-label="Perforce credentials"]`), absent(`#hooks-h`))
		e2e.Screenshot(t, tab, shots, role+"-organization")
	}
}
