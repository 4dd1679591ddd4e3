package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// axeScript is axe-core's axe.min.js, installed by scripts/install-axe-core.sh into .cache/ on
// first use (make deps installs it too).
var axeScript = sync.OnceValues(func() (string, error) {
	out, err := exec.Command(RepoPath("scripts", "install-axe-core.sh")).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return "", &installError{err: err, stderr: string(ee.Stderr)}
		}
		return "", err
	}
	src, err := os.ReadFile(strings.TrimSpace(string(out)))
	return string(src), err
})

type installError struct {
	err    error
	stderr string
}

func (e *installError) Error() string {
	return "scripts/install-axe-core.sh: " + e.err.Error() + ": " + strings.TrimSpace(e.stderr)
}

// axeRun runs axe-core on the page for WCAG 2.2 A and AA (with 2.0 and 2.1's: the 2.2 tags add
// target-size, every target at least 24×24 CSS px or spaced as far) and axe's best practices and
// answers its violations, each as "rule (impact): help — the first offending elements".
const axeRun = `(async () => {
	const r = await axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22a', 'wcag22aa', 'best-practice']},
		rules: {'target-size': {enabled: true}}}); // off by default in axe-core 4.10
	return r.violations.map(v => v.id + ' (' + v.impact + '): ' + v.help + ' — ' +
		v.nodes.slice(0, 3).map(n => n.target.join(' ') + ' ' + (n.failureSummary || '').replace(/\s+/g, ' ')).join(' | '));
})()`

// axeViolations loads axe-core into the page (once per document) and answers what it reports.
func axeViolations(t testing.TB, ctx context.Context, page string) []string {
	t.Helper()
	src, err := axeScript()
	if err != nil {
		t.Fatalf("axe-core is needed by the console's browser tests: %v", err)
	}
	loaded := Value(t, ctx, "look for axe-core on "+page, chromedp.Evaluate[bool](`typeof axe === 'object'`))
	if !loaded {
		// The page's own scripts never see axe: it is evaluated as the test's code, once per
		// document (a console navigation keeps the document).
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](src+";0")); err != nil {
			t.Fatalf("load axe-core into %s: %v", page, err)
		}
	}
	return Value(t, ctx, "run axe-core on "+page, chromedp.Evaluate[[]string](axeRun, chromedp.EvalAwaitPromise))
}
