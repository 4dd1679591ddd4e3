package console

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestConsoleLogViewer drives the build page's log viewer in headless Chromium on a real build
// whose cook fails after 3,000 lines: stages are folded with their durations, the failing stage
// open; a stage opens and closes; search counts every occurrence and steps through them; the
// first error is one click away and linked by address; an address naming a line (#L<seq>)
// opens its stage and highlights it; the raw download is the text log, byte for byte.
func TestConsoleLogViewer(t *testing.T) {
	t.Parallel()
	ctx := e2e.StartBrowser(t)
	w := e2e.NewWorld(t, e2e.Serve)
	pid := w.AddShooter(t)
	w.Shooter.Commit("failing", "A chatty cook that fails", "Ada Lovelace", map[string]string{
		"Shooter/FakeUAT.env": "FAKE_UAT_LINES=3000\nFAKE_UAT_FAIL=cook\n"})
	sid := w.AddSetting(t, pid, map[string]any{"branch": "failing"})["id"].(string)
	id := w.Trigger(t, pid, sid, "")
	if b := w.WaitEnded(t, id); b["status"] != "failed" {
		t.Fatalf("the build %v, want failed", b["status"])
	}

	// What the API says, to check the page against.
	raw := w.LogText(t, id)
	var levels, msgs []string
	for cursor := ""; ; {
		p := w.LogPage(t, id, cursor, "limit=1000")
		for _, it := range p.Items {
			levels, msgs = append(levels, it["level"].(string)), append(msgs, it["message"].(string))
		}
		if cursor = p.Cursor; cursor == "" {
			break
		}
	}
	firstError := slices.Index(levels, "error") + 1
	lineOf := func(prefix string) int {
		for i, m := range msgs {
			if strings.HasPrefix(m, prefix) {
				return i + 1
			}
		}
		t.Fatalf("the log has no line %q", prefix)
		return 0
	}
	if firstError == 0 || !strings.HasPrefix(msgs[firstError-1], "LogCook: Error:") {
		t.Fatalf("the first error is line %d, want the cook's error", firstError)
	}

	e2e.Run(t, ctx, "open the build", chromedp.Navigate(w.URL()+"/console/builds/"+id), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), w.Token), chromedp.Click(chromedp.ID(`#signin`)),
		e2e.WaitJS(`document.getElementById('log-state')?.textContent.includes('ended')`),
		e2e.WaitJS(`document.getElementById('log').dataset.lines === '`+strconv.Itoa(len(msgs))+`'`))

	// Stages are folded, with durations; the stage holding the first error is open.
	const stages = `Object.fromEntries([...document.querySelectorAll('#log .log-stage')].map(r =>
		[r.dataset.stageName, r.querySelector('.log-fold').getAttribute('aria-expanded') + ' ' + r.querySelector('.dur').textContent.trim()]))`
	e2e.Run(t, ctx, "see the top", chromedp.Evaluate[chromedp.Void](`document.getElementById('log').scrollTop = 0`),
		e2e.WaitJS(`document.querySelector('#log .log-stage[data-stage-name="compile"]') !== null`))
	seen := e2e.Value(t, ctx, "read the stages", chromedp.Evaluate[map[string]string](stages))
	took := regexp.MustCompile(`^(true|false) \d+(\.\d)? (ms|s)$`)
	for name, open := range map[string]string{"sync": "false", "compile": "false", "cook": "true", "COOK command": "true"} {
		if !took.MatchString(seen[name]) || !strings.HasPrefix(seen[name], open+" ") {
			t.Errorf("stage %s shows %q, want expanded=%s and a duration (all: %v)", name, seen[name], open, seen)
		}
	}
	if _, ok := seen["BUILD command"]; ok {
		t.Errorf("the BUILD command is shown inside the folded compile stage: %v", seen)
	}
	// Open the compile stage: its BUILD command shows, folded; close it again.
	const compile = `document.querySelector('#log .log-stage[data-stage-name="compile"] .log-fold')`
	e2e.Run(t, ctx, "open compile", chromedp.Evaluate[chromedp.Void](compile+`.click()`),
		e2e.WaitJS(compile+`.getAttribute('aria-expanded') === 'true' && document.querySelector('#log .log-stage[data-stage-name="BUILD command"] .log-fold')?.getAttribute('aria-expanded') === 'false'`))
	e2e.Run(t, ctx, "close compile", chromedp.Evaluate[chromedp.Void](compile+`.click()`),
		e2e.WaitJS(compile+`.getAttribute('aria-expanded') === 'false' && !document.querySelector('#log .log-stage[data-stage-name="BUILD command"]')`))

	// Search: every occurrence counted (also those in folded stages), Enter and the buttons step.
	const q = "fake line 12"
	want := strings.Count(strings.ToLower(raw), q)
	if want < 100 {
		t.Fatalf("the log has %d occurrences of %q", want, q)
	}
	count := func(n int) string { return fmt.Sprintf("%d of %d matches", n, want) }
	current := `document.querySelector('#log mark.current')?.closest('.log-row')?.textContent || ''`
	e2e.Run(t, ctx, "search", chromedp.SendKeys(chromedp.ID(`#log-search`), q),
		e2e.WaitJS(`document.getElementById('log-count').textContent === '`+count(1)+`'`))
	if got := e2e.Value(t, ctx, "read the match", chromedp.Evaluate[string](current)); !strings.Contains(got, "LogCook: Display: fake line 12") {
		t.Errorf("the current match is on %q", got)
	}
	e2e.Run(t, ctx, "next match", chromedp.SendKeys(chromedp.ID(`#log-search`), "\r"),
		e2e.WaitJS(`document.getElementById('log-count').textContent === '`+count(2)+`'`),
		e2e.WaitJS(`(`+current+`).includes('fake line 120')`))
	e2e.Run(t, ctx, "previous match", chromedp.Click(chromedp.ID(`#log-prev`)), chromedp.Click(chromedp.ID(`#log-prev`)),
		e2e.WaitJS(`document.getElementById('log-count').textContent === '`+count(want)+`'`))
	e2e.Screenshot(t, ctx, e2e.ArtifactsDir(t), "build-log-search")
	e2e.Run(t, ctx, "clear the search", chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('log-search'); s.value = ''; s.dispatchEvent(new Event('input')); })()`),
		e2e.WaitJS(`document.getElementById('log-count').textContent === '' && !document.querySelector('#log mark')`))

	// Jump to the first error: the address names it and it is highlighted, in sight.
	target := func(seq int) string {
		return `(() => { const r = document.querySelector('#log .log-row.target'), l = document.getElementById('log');
			if (!r || r.dataset.seq !== '` + strconv.Itoa(seq) + `' || location.hash !== '#L` + strconv.Itoa(seq) + `') return false;
			const a = r.getBoundingClientRect(), b = l.getBoundingClientRect();
			return a.top >= b.top && a.bottom <= b.bottom; })()`
	}
	e2e.Run(t, ctx, "jump to the first error", chromedp.Click(chromedp.ID(`#log-first-error`)), e2e.WaitJS(target(firstError)))
	if c := e2e.Value(t, ctx, "read the error's colours", e2e.ColoursOf(`document.querySelector('#log .log-row.target .log-line')`)); c.Ratio < 4.5 || !strings.Contains(c.Color, "255") {
		t.Errorf("the first error is drawn %s on %s: contrast %.2f:1, want an error colour at least 4.5:1", c.Color, c.Background, c.Ratio)
	}
	const warn = `document.querySelector('#log .log-line.level-warn')`
	e2e.Run(t, ctx, "find a warning", chromedp.SendKeys(chromedp.ID(`#log-search`), "has no mips"), e2e.WaitJS(warn+` !== null`))
	if c := e2e.Value(t, ctx, "read a warning's colours", e2e.ColoursOf(warn)); c.Ratio < 4.5 {
		t.Errorf("a warning is drawn %s on %s: contrast %.2f:1, want at least 4.5:1", c.Color, c.Background, c.Ratio)
	}

	// A line's address: inside the folded compile stage; opening it opens the stage and highlights it.
	inCompile := lineOf("Running: UnrealBuildTool")
	e2e.Run(t, ctx, "open a line's address", chromedp.Navigate(w.URL()+"/console/builds/"+id+"#L"+strconv.Itoa(inCompile)),
		e2e.WaitJS(target(inCompile)),
		e2e.WaitJS(`document.querySelector('#log .log-stage[data-stage-name="BUILD command"] .log-fold')?.getAttribute('aria-expanded') === 'true'`))
	if got := e2e.Value(t, ctx, "read the line", chromedp.Evaluate[string](`document.querySelector('#log .log-row.target .log-line').textContent`)); got != msgs[inCompile-1] {
		t.Errorf("the highlighted line is %q, want %q", got, msgs[inCompile-1])
	}
	// A line's link puts the line in the middle of the window: the page scrolled to the log, the
	// log to the line.
	deep := lineOf("LogCook: Display: fake line 1500")
	const middle = `(() => { const r = document.querySelector('#log .log-row.target')?.getBoundingClientRect();
		return !!r && Math.abs(r.top + r.height / 2 - innerHeight / 2) <= r.height; })()`
	e2e.Run(t, ctx, "open a deep line's address", chromedp.Navigate(w.URL()+"/console/builds/"+id+"#L"+strconv.Itoa(deep)),
		e2e.WaitJS(target(deep)), e2e.WaitJS(middle))
	// The same link opened in a new tab of this browser: signed in (the console's tab hands its
	// token over), the line in the middle.
	newTab, closeTab := chromedp.NewContext(ctx)
	e2e.Run(t, newTab, "open the line's link in a new tab", chromedp.Navigate(w.URL()+"/console/builds/"+id+"#L"+strconv.Itoa(deep)),
		e2e.WaitJS(target(deep)), e2e.WaitJS(middle), e2e.WaitJS(`document.getElementById('token') === null && document.getElementById('signout') !== null`))
	closeTab()

	// Clicking a line's number links it.
	next := deep + 1
	e2e.Run(t, ctx, "click a line number", chromedp.Evaluate[chromedp.Void](`document.querySelector('#log .log-row[data-seq="`+strconv.Itoa(next)+`"] a.ln').click()`), e2e.WaitJS(target(next)))

	// Timestamps on demand.
	e2e.Run(t, ctx, "show timestamps", chromedp.Click(chromedp.ID(`#log-times`)), e2e.WaitJS(`/^\d\d:\d\d:\d\d\.\d{3}$/.test(document.querySelector('#log .log-row .ts')?.textContent)`))
	e2e.Screenshot(t, ctx, e2e.ArtifactsDir(t), "build-log")
	e2e.Run(t, ctx, "hide timestamps", chromedp.Click(chromedp.ID(`#log-times`)), e2e.WaitJS(`!document.querySelector('#log .ts')`))

	// The raw log, as the API's text.
	if got := string(downloaded(t, ctx, `#log-raw`)); got != raw {
		t.Errorf("the raw download has %d bytes, want the text log's %d", len(got), len(raw))
	}
}

// TestConsoleLogViewerFollows: on a running build the viewer follows the log: new lines come,
// the newest stage is open and at the bottom, the stages before it fold.
func TestConsoleLogViewerFollows(t *testing.T) {
	t.Parallel()
	ctx := e2e.StartBrowser(t)
	w := e2e.NewWorld(t, e2e.Serve)
	pid := w.AddShooter(t)
	// Two seconds a stage, and a cook of ten 1-second assets: time enough to see it open even when
	// the machine is busy.
	w.Shooter.Commit("paced", "Pace the build", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=2\nFAKE_UAT_ASSETS=10\nFAKE_UAT_COOK_MS=1000\n"})
	sid := w.AddSetting(t, pid, map[string]any{"branch": "paced"})["id"].(string)
	id := w.Trigger(t, pid, sid, "")
	e2e.Run(t, ctx, "open the build", chromedp.Navigate(w.URL()+"/console/builds/"+id), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), w.Token), chromedp.Click(chromedp.ID(`#signin`)),
		e2e.WaitJS(`document.getElementById('log-state')?.textContent.includes('following')`))
	// The cook is open at the bottom, its newest line drawn in sight; compile, before it, folded.
	const expanded = `document.querySelector('#log .log-stage[data-stage-name="%s"] .log-fold')?.getAttribute('aria-expanded')`
	const atBottom = `(() => { const l = document.getElementById('log'), rows = l.querySelectorAll('.log-row');
		const last = rows[rows.length - 1], a = last.getBoundingClientRect(), b = l.getBoundingClientRect();
		return last.dataset.seq === l.dataset.lines && a.bottom <= b.bottom + 1 && a.top >= b.top; })()`
	e2e.Run(t, ctx, "follow into the cook", e2e.WaitJS(fmt.Sprintf(expanded, "COOK command")+` === 'true' && `+fmt.Sprintf(expanded, "cook")+` === 'true'
		&& `+fmt.Sprintf(expanded, "compile")+` === 'false' && document.querySelector('h1 .status')?.textContent === 'running'`), e2e.WaitJS(atBottom))
	// The header's elapsed time, the Duration and the running stage's time so far tick together,
	// and agree: the build has run at least as long as its stage.
	const clocks = `(() => { const secs = (t) => { const m = /(?:(\d+) min )?(\d+(?:\.\d)?) (ms|s)\b/.exec(t || ''); return !m ? -1 : m[3] === 'ms' ? Number(m[2]) / 1000 : Number(m[1] || 0) * 60 + Number(m[2]); };
		const header = document.getElementById('progress-text')?.textContent || '', dur = document.getElementById('duration')?.textContent || '';
		const stage = document.querySelector('#log .log-stage[data-stage-name="cook"] .dur')?.textContent || '';
		return {header: secs(header.slice(header.indexOf('·'))), duration: dur.endsWith(' so far') ? secs(dur) : -1, stage: stage.includes('so far') ? secs(stage) : -1}; })()`
	type clock struct{ Header, Duration, Stage float64 }
	before := e2e.Value(t, ctx, "read the clocks", chromedp.Evaluate[clock](clocks))
	if before.Header < 0 || before.Duration < 0 || before.Stage < 0 || before.Stage > before.Header+1 {
		t.Errorf("a running build's times: %+v, want the header's elapsed, the Duration so far and the stage's so far, the stage within the build", before)
	}
	e2e.Run(t, ctx, "see the clocks tick", e2e.WaitJS(`(() => { const c = `+clocks+`; return c.header > `+fmt.Sprint(before.Header)+` && c.duration > `+fmt.Sprint(before.Duration)+` && c.stage > `+fmt.Sprint(before.Stage)+`; })()`))
	lines := e2e.Value(t, ctx, "count the lines", chromedp.Evaluate[int](`Number(document.getElementById('log').dataset.lines)`))
	e2e.Run(t, ctx, "see new lines", e2e.WaitJS(`Number(document.getElementById('log').dataset.lines) > `+strconv.Itoa(lines)), e2e.WaitJS(atBottom))
	e2e.Run(t, ctx, "see it end", e2e.WaitJS(`document.getElementById('log-state').textContent.includes('ended')`), e2e.WaitJS(atBottom))
	if got, want := e2e.Value(t, ctx, "count the lines", chromedp.Evaluate[int](`Number(document.getElementById('log').dataset.lines)`)),
		strings.Count(w.LogText(t, id), "\n"); got != want {
		t.Errorf("the viewer holds %d lines, the log has %d", got, want)
	}
}
