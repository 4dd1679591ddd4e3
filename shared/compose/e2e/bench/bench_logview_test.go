package bench

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/httpapi"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// benchLogLines is the size of the benchmark's log: a build's log holds at most that many lines
// by default (KILN_LOG_MAX_LINES).
const benchLogLines = 200_000

// BenchmarkLogViewer measures the console's log viewer in headless Chromium on a complete build
// of 200,000 lines (kiln's stages, AutomationTool's commands, a warning every 1,000 lines, one
// error): the time from asking for the log to its first rows on screen, the time until every
// line is loaded, and the time to search it (count every occurrence and show the first); beside
// the same log's raw text (GET /builds/:id/logs) drawn in a <pre> and searched there (counted,
// and the first found with the browser's own find), measured in the same run, as ratios.
func BenchmarkLogViewer(b *testing.B) {
	s := seedLog(b, benchLogLines)
	ctx := e2e.StartBrowser(b)
	e2e.Run(b, ctx, "sign in", chromedp.Navigate(s.url+"/console/"), chromedp.WaitVisible(chromedp.ID(`#token`)),
		chromedp.SendKeys(chromedp.ID(`#token`), s.token), chromedp.Click(chromedp.ID(`#signin`)), chromedp.WaitVisible(chromedp.ID(`#builds`)))
	const q = "fake line 123456"

	var first, loaded, search []float64
	b.Run("logview", func(b *testing.B) {
		for b.Loop() {
			e2e.Run(b, ctx, "load", chromedp.Navigate(s.url+"/console/builds/"+s.build))
			// From the first log page's request to the first row drawn (a mutation observer checks
			// after every change of the page).
			ms := e2e.Value(b, ctx, "wait for the first rows", chromedp.Poll[float64](`document.querySelector('#log .log-row') &&
				performance.now() - performance.getEntriesByType('resource').find(e => e.name.includes('/logs?')).startTime`,
				chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(30*time.Second)))
			all := e2e.Value(b, ctx, "wait for every line", chromedp.Poll[float64](`document.getElementById('log').dataset.lines === '`+strconv.Itoa(benchLogLines)+`' &&
				performance.now() - performance.getEntriesByType('resource').find(e => e.name.includes('/logs?')).startTime`,
				chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(120*time.Second)))
			took := e2e.Value(b, ctx, "search", chromedp.Evaluate[float64](`(() => {
				const s = document.getElementById('log-search'), t0 = performance.now();
				s.value = '`+q+`';
				s.dispatchEvent(new Event('input'));
				if (!document.getElementById('log-count').textContent.startsWith('1 of ')) throw new Error('no match counted');
				document.querySelector('#log mark.current').getBoundingClientRect(); // laid out
				return performance.now() - t0; })()`))
			first, loaded, search = append(first, ms), append(loaded, all), append(search, took)
		}
		b.ReportMetric(median(first), "first-rows-ms")
		b.ReportMetric(median(loaded), "all-lines-ms")
		b.ReportMetric(median(search), "search-ms")
	})

	var rawFirst, rawSearch []float64
	b.Run("raw-pre", func(b *testing.B) {
		for b.Loop() {
			e2e.Run(b, ctx, "load", chromedp.Navigate(s.url+"/console/nothing"), chromedp.WaitVisible(chromedp.CSS(`main h1`)))
			ms := e2e.Value(b, ctx, "draw the raw log", chromedp.Evaluate[float64](`(async () => {
				const t0 = performance.now();
				const resp = await fetch('/builds/`+s.build+`/logs', {headers: {Authorization: 'Bearer ' + sessionStorage.getItem('kiln.token')}});
				const pre = document.createElement('pre');
				pre.className = 'log';
				pre.textContent = await resp.text();
				document.getElementById('main').append(pre);
				pre.getBoundingClientRect(); // laid out
				return performance.now() - t0; })()`, chromedp.EvalAwaitPromise))
			took := e2e.Value(b, ctx, "search the raw log", chromedp.Evaluate[float64](`(() => {
				const t0 = performance.now(), q = '`+q+`';
				const text = document.querySelector('pre.log').textContent.toLowerCase();
				let n = 0;
				for (let at = text.indexOf(q); at >= 0; at = text.indexOf(q, at + q.length)) n++;
				if (!n || !window.find(q)) throw new Error('not found');
				return performance.now() - t0; })()`))
			rawFirst, rawSearch = append(rawFirst, ms), append(rawSearch, took)
		}
		b.ReportMetric(median(rawFirst), "first-rows-ms")
		b.ReportMetric(median(rawSearch), "search-ms")
	})
	if len(first) > 0 && len(rawFirst) > 0 {
		fmt.Printf("\nlog viewer on %d lines: first rows %.0f ms after the log was asked for (raw <pre>: %.0f ms, ratio %.2f); "+
			"every line loaded after %.0f ms; search %.1f ms (raw <pre>, counted and found: %.1f ms, ratio %.2f)\n",
			benchLogLines, median(first), median(rawFirst), median(first)/median(rawFirst),
			median(loaded), median(search), median(rawSearch), median(search)/median(rawSearch))
	}
}

// seedLog serves the API on a store holding one complete build whose log has n lines.
func seedLog(b *testing.B, n int) (s struct{ url, token, build string }) {
	b.Helper()
	ctx := context.Background()
	st, org, token := benchOrg(b)
	logs, err := buildlog.NewFiles(filepath.Join(b.TempDir(), "logs"))
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	done := t0.Add(time.Duration(n) * 5 * time.Millisecond)
	bld := &kiln.Build{ID: kiln.NewID(), OrganizationID: org, ProjectID: kiln.NewID(), BuildSettingID: kiln.NewID(),
		Status: kiln.StatusComplete, Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping, Branch: "main",
		Commit: fmt.Sprintf("%040x", 1), UEVersion: "5.3", TriggeredBy: "cron", CreatedAt: t0, StartedAt: &t0, FinishedAt: &done}
	if err := st.CreateBuild(ctx, bld); err != nil {
		b.Fatal(err)
	}
	// In batches, as the runner writes a log (and so as its index has it).
	lines := benchLog(t0, n)
	for i := 0; i < len(lines); i += 250 {
		if err := logs.Append(ctx, bld.OrganizationID, bld.ID, int64(i+1), lines[i:min(i+250, len(lines))]...); err != nil {
			b.Fatal(err)
		}
	}
	keys, _ := keyring.New(make([]byte, keyring.MasterKeySize))
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Store: st, Keys: keys, Logs: logs, Logger: e2e.DiscardLogger(), AuthCacheTTL: serve.AuthCacheTTL}))
	b.Cleanup(srv.Close)
	s.url, s.token, s.build = srv.URL, token, bld.ID
	return s
}

// benchLog is a log of n lines shaped like a build's: kiln's stages with AutomationTool's
// commands in them, the cook's chatter taking most of it.
func benchLog(t0 time.Time, n int) []kiln.LogLine {
	head := []string{"==> kiln: stage sync", "Cloning the repository", "==> kiln: stage compile",
		"********** BUILD COMMAND STARTED **********", "Building Shooter...", "********** BUILD COMMAND COMPLETED **********",
		"==> kiln: stage cook", "********** COOK COMMAND STARTED **********"}
	tail := []string{"********** COOK COMMAND COMPLETED **********", "==> kiln: stage package",
		"********** STAGE COMMAND STARTED **********", "********** STAGE COMMAND COMPLETED **********", "==> kiln: stage upload", "kiln: build complete"}
	lines := make([]kiln.LogLine, 0, n)
	add := func(level kiln.LogLevel, msg string) {
		lines = append(lines, kiln.LogLine{Time: t0.Add(time.Duration(len(lines)) * 5 * time.Millisecond), Level: level, Message: msg})
	}
	for _, m := range head {
		add(kiln.LevelInfo, m)
	}
	for i := 1; len(lines) < n-len(tail); i++ {
		switch {
		case i%1000 == 0:
			add(kiln.LevelWarn, fmt.Sprintf("LogCook: Warning: /Game/Maps/Map%d: texture has no mips", i))
		case i == 150_000:
			add(kiln.LevelError, "LogCook: Error: Failed to cook /Game/Maps/Main")
		default:
			add(kiln.LevelInfo, fmt.Sprintf("LogCook: Display: fake line %d", i))
		}
	}
	for _, m := range tail {
		add(kiln.LevelInfo, m)
	}
	return lines
}
