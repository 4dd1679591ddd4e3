package app

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleLogViewer drives the build page's log viewer in headless Chromium on a real build
// whose cook fails after 3,000 lines: stages are folded with their durations, the failing stage
// open; a stage opens and closes; search counts every occurrence and steps through them; the
// first error is one click away and linked by address; an address naming a line (#L<seq>)
// opens its stage and highlights it; the raw download is the text log, byte for byte.
func TestConsoleLogViewer(t *testing.T) {
	ctx := startBrowser(t)
	w := newWorld(t)
	pid := w.addShooter(t)
	w.shooter.Commit("failing", "A chatty cook that fails", "Ada Lovelace", map[string]string{
		"Shooter/FakeUAT.env": "FAKE_UAT_LINES=3000\nFAKE_UAT_FAIL=cook\n"})
	sid := w.addSetting(t, pid, map[string]any{"branch": "failing"})["id"].(string)
	id := w.trigger(t, pid, sid, "")
	if b := w.waitEnded(t, id); b["status"] != "failed" {
		t.Fatalf("the build %v, want failed", b["status"])
	}

	// What the API says, to check the page against.
	raw := w.logText(t, id)
	var levels, msgs []string
	for cursor := ""; ; {
		p := w.logPage(t, id, cursor, "limit=1000")
		for _, it := range p.items {
			levels, msgs = append(levels, it["level"].(string)), append(msgs, it["message"].(string))
		}
		if cursor = p.cursor; cursor == "" {
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

	run(t, ctx, "open the build", chromedp.Navigate(w.URL()+"/console/builds/"+id), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), w.token), chromedp.Click(chromedp.ID(`#signin`)),
		waitJS(`document.getElementById('log-state')?.textContent.includes('ended')`),
		waitJS(`document.getElementById('log').dataset.lines === '`+strconv.Itoa(len(msgs))+`'`))

	// Stages are folded, with durations; the stage holding the first error is open.
	const stages = `Object.fromEntries([...document.querySelectorAll('#log .log-stage')].map(r =>
		[r.dataset.stageName, r.querySelector('.log-fold').getAttribute('aria-expanded') + ' ' + r.querySelector('.dur').textContent.trim()]))`
	run(t, ctx, "see the top", chromedp.Evaluate[chromedp.Void](`document.getElementById('log').scrollTop = 0`),
		waitJS(`document.querySelector('#log .log-stage[data-stage-name="compile"]') !== null`))
	seen := value(t, ctx, "read the stages", chromedp.Evaluate[map[string]string](stages))
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
	run(t, ctx, "open compile", chromedp.Evaluate[chromedp.Void](compile+`.click()`),
		waitJS(compile+`.getAttribute('aria-expanded') === 'true' && document.querySelector('#log .log-stage[data-stage-name="BUILD command"] .log-fold')?.getAttribute('aria-expanded') === 'false'`))
	run(t, ctx, "close compile", chromedp.Evaluate[chromedp.Void](compile+`.click()`),
		waitJS(compile+`.getAttribute('aria-expanded') === 'false' && !document.querySelector('#log .log-stage[data-stage-name="BUILD command"]')`))

	// Search: every occurrence counted (also those in folded stages), Enter and the buttons step.
	const q = "fake line 12"
	want := strings.Count(strings.ToLower(raw), q)
	if want < 100 {
		t.Fatalf("the log has %d occurrences of %q", want, q)
	}
	count := func(n int) string { return fmt.Sprintf("%d of %d matches", n, want) }
	current := `document.querySelector('#log mark.current')?.closest('.log-row')?.textContent || ''`
	run(t, ctx, "search", chromedp.SendKeys(chromedp.ID(`#log-search`), q),
		waitJS(`document.getElementById('log-count').textContent === '`+count(1)+`'`))
	if got := value(t, ctx, "read the match", chromedp.Evaluate[string](current)); !strings.Contains(got, "LogCook: Display: fake line 12") {
		t.Errorf("the current match is on %q", got)
	}
	run(t, ctx, "next match", chromedp.SendKeys(chromedp.ID(`#log-search`), "\r"),
		waitJS(`document.getElementById('log-count').textContent === '`+count(2)+`'`),
		waitJS(`(`+current+`).includes('fake line 120')`))
	run(t, ctx, "previous match", chromedp.Click(chromedp.ID(`#log-prev`)), chromedp.Click(chromedp.ID(`#log-prev`)),
		waitJS(`document.getElementById('log-count').textContent === '`+count(want)+`'`))
	screenshot(t, ctx, artifactsDir(t), "build-log-search")
	run(t, ctx, "clear the search", chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('log-search'); s.value = ''; s.dispatchEvent(new Event('input')); })()`),
		waitJS(`document.getElementById('log-count').textContent === '' && !document.querySelector('#log mark')`))

	// Jump to the first error: the address names it and it is highlighted, in sight.
	target := func(seq int) string {
		return `(() => { const r = document.querySelector('#log .log-row.target'), l = document.getElementById('log');
			if (!r || r.dataset.seq !== '` + strconv.Itoa(seq) + `' || location.hash !== '#L` + strconv.Itoa(seq) + `') return false;
			const a = r.getBoundingClientRect(), b = l.getBoundingClientRect();
			return a.top >= b.top && a.bottom <= b.bottom; })()`
	}
	run(t, ctx, "jump to the first error", chromedp.Click(chromedp.ID(`#log-first-error`)), waitJS(target(firstError)))
	if c := value(t, ctx, "read the error's colours", coloursOf(`document.querySelector('#log .log-row.target .log-line')`)); c.Ratio < 4.5 || !strings.Contains(c.Color, "255") {
		t.Errorf("the first error is drawn %s on %s: contrast %.2f:1, want an error colour at least 4.5:1", c.Color, c.Background, c.Ratio)
	}
	const warn = `document.querySelector('#log .log-line.level-warn')`
	run(t, ctx, "find a warning", chromedp.SendKeys(chromedp.ID(`#log-search`), "has no mips"), waitJS(warn+` !== null`))
	if c := value(t, ctx, "read a warning's colours", coloursOf(warn)); c.Ratio < 4.5 {
		t.Errorf("a warning is drawn %s on %s: contrast %.2f:1, want at least 4.5:1", c.Color, c.Background, c.Ratio)
	}

	// A line's address: inside the folded compile stage; opening it opens the stage and highlights it.
	inCompile := lineOf("Running: UnrealBuildTool")
	run(t, ctx, "open a line's address", chromedp.Navigate(w.URL()+"/console/builds/"+id+"#L"+strconv.Itoa(inCompile)),
		waitJS(target(inCompile)),
		waitJS(`document.querySelector('#log .log-stage[data-stage-name="BUILD command"] .log-fold')?.getAttribute('aria-expanded') === 'true'`))
	if got := value(t, ctx, "read the line", chromedp.Evaluate[string](`document.querySelector('#log .log-row.target .log-line').textContent`)); got != msgs[inCompile-1] {
		t.Errorf("the highlighted line is %q, want %q", got, msgs[inCompile-1])
	}
	// Clicking a line's number links it.
	next := inCompile + 1
	run(t, ctx, "click a line number", chromedp.Evaluate[chromedp.Void](`document.querySelector('#log .log-row[data-seq="`+strconv.Itoa(next)+`"] a.ln').click()`), waitJS(target(next)))

	// Timestamps on demand.
	run(t, ctx, "show timestamps", chromedp.Click(chromedp.ID(`#log-times`)), waitJS(`/^\d\d:\d\d:\d\d\.\d{3}$/.test(document.querySelector('#log .log-row .ts')?.textContent)`))
	screenshot(t, ctx, artifactsDir(t), "build-log")
	run(t, ctx, "hide timestamps", chromedp.Click(chromedp.ID(`#log-times`)), waitJS(`!document.querySelector('#log .ts')`))

	// The raw log, as the API's text.
	if got := string(downloaded(t, ctx, `#log-raw`)); got != raw {
		t.Errorf("the raw download has %d bytes, want the text log's %d", len(got), len(raw))
	}
}

// TestConsoleLogViewerFollows: on a running build the viewer follows the log: new lines come,
// the newest stage is open and at the bottom, the stages before it fold.
func TestConsoleLogViewerFollows(t *testing.T) {
	ctx := startBrowser(t)
	w := newWorld(t)
	pid := w.addShooter(t)
	w.shooter.Commit("paced", "Pace the build", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=2\n"})
	sid := w.addSetting(t, pid, map[string]any{"branch": "paced"})["id"].(string)
	id := w.trigger(t, pid, sid, "")
	run(t, ctx, "open the build", chromedp.Navigate(w.URL()+"/console/builds/"+id), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), w.token), chromedp.Click(chromedp.ID(`#signin`)),
		waitJS(`document.getElementById('log-state')?.textContent.includes('following')`))
	// The cook is open at the bottom, its newest line drawn in sight; compile, before it, folded.
	const expanded = `document.querySelector('#log .log-stage[data-stage-name="%s"] .log-fold')?.getAttribute('aria-expanded')`
	const atBottom = `(() => { const l = document.getElementById('log'), rows = l.querySelectorAll('.log-row');
		const last = rows[rows.length - 1], a = last.getBoundingClientRect(), b = l.getBoundingClientRect();
		return last.dataset.seq === l.dataset.lines && a.bottom <= b.bottom + 1 && a.top >= b.top; })()`
	run(t, ctx, "follow into the cook", waitJS(fmt.Sprintf(expanded, "COOK command")+` === 'true' && `+fmt.Sprintf(expanded, "cook")+` === 'true'
		&& `+fmt.Sprintf(expanded, "compile")+` === 'false' && document.querySelector('h1 .status')?.textContent === 'running'`), waitJS(atBottom))
	lines := value(t, ctx, "count the lines", chromedp.Evaluate[int](`Number(document.getElementById('log').dataset.lines)`))
	run(t, ctx, "see new lines", waitJS(`Number(document.getElementById('log').dataset.lines) > `+strconv.Itoa(lines)), waitJS(atBottom))
	run(t, ctx, "see it end", waitJS(`document.getElementById('log-state').textContent.includes('ended')`), waitJS(atBottom))
	if got, want := value(t, ctx, "count the lines", chromedp.Evaluate[int](`Number(document.getElementById('log').dataset.lines)`)),
		strings.Count(w.logText(t, id), "\n"); got != want {
		t.Errorf("the viewer holds %d lines, the log has %d", got, want)
	}
}
