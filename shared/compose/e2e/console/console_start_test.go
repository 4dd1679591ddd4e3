package console

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestConsoleGettingStarted: on a kiln with nothing set up (make run: no GitHub App, no project),
// the builds list says what is missing, in order, with the next step and make demo; the
// organization page says plainly why GitHub cannot be linked instead of offering a link the
// server refuses.
func TestConsoleGettingStarted(t *testing.T) {
	t.Parallel()
	ts := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, filepath.Join(t.TempDir(), "data")))
	// The API says how GitHub links here (not at all) and what the plan allows.
	if r := ts.Do(t, "GET", "/auth/methods", "", nil); r.Body["githubLink"] != "none" {
		t.Errorf("sign-in methods without a GitHub App: %s", r.Raw)
	}
	orgID := e2e.OrgOf(t, ts)
	if r := ts.Do(t, "GET", "/organizations/"+orgID+"/usage", ts.Token, nil); e2e.Field(t, r.Body, "plan") != "enterprise" || r.Body["allows"] == nil {
		t.Errorf("usage: %s", r.Raw)
	}
	ctx := e2e.StartBrowser(t)
	e2e.Run(t, ctx, "sign in", chromedp.Navigate(ts.URL()+"/console/"), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), ts.Token), chromedp.Click(chromedp.ID(`#signin`)), chromedp.WaitVisible(chromedp.ID(`#getting-started`)))
	steps := e2e.Value(t, ctx, "read the checklist", chromedp.Evaluate[[]string](`[...document.querySelectorAll('#getting-started li')].map(li => li.dataset.step + '=' + li.dataset.done)`))
	want := []string{"engine=unknown", "source=false", "project=false", "setting=false", "build=false"}
	if len(steps) != len(want) {
		t.Fatalf("checklist %v, want %v", steps, want)
	}
	for i := range want {
		if steps[i] != want[i] {
			t.Fatalf("checklist %v, want %v", steps, want)
		}
	}
	e2e.Run(t, ctx, "see the next steps", e2e.WaitJS(`document.querySelector('#getting-started [data-step=source]').textContent.includes('KILN_GITHUB_APP_ID')
		&& document.querySelector('#getting-started [data-step=project] a')?.getAttribute('href') === '/console/projects'
		&& document.getElementById('try-demo').textContent.includes('make demo')`))
	e2e.Screenshot(t, ctx, e2e.ArtifactsDir(t), "builds-getting-started")

	// No GitHub App: no "Link GitHub" to click into a refusal, but what is missing.
	e2e.Run(t, ctx, "open the organization", chromedp.Click(chromedp.CSS(`nav a[href="/console/organization"]`)), chromedp.WaitVisible(chromedp.ID(`#github-missing`)))
	if e2e.Value(t, ctx, "look for Link GitHub", chromedp.Evaluate[bool](`document.getElementById('link-github') !== null`)) {
		t.Error("a server without a GitHub App offers Link GitHub")
	}
	if text := e2e.Value(t, ctx, "read why", chromedp.Text(chromedp.ID(`#github-missing`))); !contains(text, "no GitHub App configured", "KILN_GITHUB_APP_KEY", "make demo") {
		t.Errorf("the organization page says %q", text)
	}
}

// contains reports whether s holds every part.
func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
