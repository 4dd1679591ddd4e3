package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/kilnbuild/kiln/shared/settings"
)

// chromium finds Debian's chromium. Without it the console's browser tests fail and say how to
// get it, unless -short.
func chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{settings.TestChromium.Get(os.Getenv), "chromium", "chromium-browser"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if testing.Short() {
		t.Skip("chromium is not installed; the console's browser tests need it (apt-get install chromium)")
	}
	t.Fatal("chromium is not installed: the console's browser tests drive a headless Chromium. " +
		"Install it (apt-get install chromium; .ci/run does), set " + settings.TestChromium.Name + " to its path, or run go test -short to skip them")
	return ""
}

// startBrowser starts a headless Chromium at a laptop's size (1366×768) and returns a tab's
// context; the browser is stopped when the test ends.
func StartBrowser(t testing.TB) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, // containers and CI run as root, where Chromium's sandbox cannot start
		chromedp.Flag("headless", true),
		chromedp.DisableGPU,
		chromedp.WindowSize(1366, 768),
		chromedp.UserDataDir(t.TempDir()),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// run runs browser actions with a deadline, failing the test with what was being done.
func Run(t testing.TB, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	Value(t, ctx, what, chromedp.Steps(steps...))
}

// value runs one browser action that answers a value.
func Value[T any](t testing.TB, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	v, err := chromedp.Run(tctx, a)
	if err != nil {
		ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		shown, _ := chromedp.Run(ectx, chromedp.Evaluate[string](`document.getElementById('errors')?.innerText || ''`))
		if png, err := chromedp.Run(ectx, chromedp.FullScreenshot(100)); err == nil {
			name := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()) + "-failed.png"
			_ = os.WriteFile(filepath.Join(ArtifactsDir(t), name), png, 0o644)
		}
		t.Fatalf("%s: %v (errors shown: %q)", what, err, strings.TrimSpace(shown))
	}
	return v
}

// artifactsDir is where the browser tests leave their screenshots (git-ignored).
func ArtifactsDir(t testing.TB) string {
	t.Helper()
	dir := RepoPath(".artifacts", "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// unlabelled lists the page's form fields without an accessible name and buttons and links
// without text.
const unlabelled = `[...document.querySelectorAll('input, select, textarea, button, a')].filter(e =>
	e.offsetParent !== null && (['A', 'BUTTON'].includes(e.tagName)
		? !(e.textContent.trim() || e.getAttribute('aria-label'))
		: !(e.labels?.length || e.getAttribute('aria-label') || e.getAttribute('aria-labelledby')))
).map(e => e.outerHTML.slice(0, 120))`

// screenshot saves the whole page as <dir>/<name>.png, after checking that every visible field,
// button and link on it has a name a screen reader can say, that axe-core finds no WCAG 2.2 AA
// violation, that the page has its own title and that it fits the window's width.
func Screenshot(t testing.TB, ctx context.Context, dir, name string) {
	t.Helper()
	if bad := Value(t, ctx, "check labels on "+name, chromedp.Evaluate[[]string](unlabelled)); len(bad) > 0 {
		t.Errorf("page %s has elements without an accessible name: %q", name, bad)
	}
	for _, v := range axeViolations(t, ctx, name) {
		t.Errorf("page %s: axe-core: %s", name, v)
	}
	// Each page says what it is in its title (a browser tab, a screen reader's first words).
	if title := Value(t, ctx, "read the title of "+name, chromedp.Evaluate[string](`document.title`)); !strings.HasSuffix(title, " · kiln") {
		t.Errorf("page %s has the title %q, not its own (\"<what> · kiln\")", name, title)
	}
	// Usable on a laptop screen: nothing wider than the 1366-pixel window.
	if wide := Value(t, ctx, "measure "+name, chromedp.Evaluate[int](`document.documentElement.scrollWidth - innerWidth`)); wide > 0 {
		t.Errorf("page %s is %d pixels wider than the window", name, wide)
	}
	png := Value(t, ctx, "screenshot "+name, chromedp.FullScreenshot(100))
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitJS polls a JavaScript expression in the page until it is true.
func WaitJS(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(40*time.Second))
}
