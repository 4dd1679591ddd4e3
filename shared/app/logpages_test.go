package app

import (
	"net/url"
	"strings"
	"testing"
)

// logPage is one page of a build's log as JSON.
type logPage struct {
	items  []map[string]any
	cursor string // "" when nextCursor is null
	status string
}

func (w *world) logPage(t *testing.T, id, cursor string, query string) logPage {
	t.Helper()
	q := "format=json&" + query
	if cursor != "" {
		q += "&cursor=" + url.QueryEscape(cursor)
	}
	r := w.do(t, "GET", "/builds/"+id+"/logs?"+q, w.token, nil)
	if r.Status != 200 {
		t.Fatalf("log page: %d %s", r.Status, r.Raw)
	}
	var p logPage
	for _, it := range r.Body["items"].([]any) {
		p.items = append(p.items, it.(map[string]any))
	}
	p.cursor, _ = r.Body["nextCursor"].(string)
	p.status, _ = r.Body["buildStatus"].(string)
	return p
}

// readAllPages pages a build's log from the start until nextCursor is null, checking that the
// lines come numbered 1, 2, 3, ... without repeats or gaps; it returns them and how many pages
// had lines while the build was running.
func (w *world) readAllPages(t *testing.T, id, query string) (msgs []string, runningPages int) {
	t.Helper()
	cursor := ""
	for range 10000 {
		p := w.logPage(t, id, cursor, query)
		for _, it := range p.items {
			if seq := int(it["seq"].(float64)); seq != len(msgs)+1 {
				t.Fatalf("line %d came as seq %d", len(msgs)+1, seq)
			}
			msgs = append(msgs, it["message"].(string))
		}
		if len(p.items) > 0 && p.status == "running" {
			runningPages++
		}
		if p.cursor == "" {
			if p.status == "running" || p.status == "pending" {
				t.Fatalf("nextCursor null while the build is %s", p.status)
			}
			return msgs, runningPages
		}
		cursor = p.cursor
	}
	t.Fatal("the log never ended")
	return nil, 0
}

// Pages read while the build writes hold every line once, in order, the same as the text log;
// long lines are cut; a restart keeps the numbers.
func TestLogPagesWhileTheBuildWrites(t *testing.T) {
	w := newWorld(t)
	pid := w.addShooter(t)
	w.shooter.Commit("chatty", "A chatty cook", "Ada Lovelace", map[string]string{
		"Shooter/FakeUAT.env": "FAKE_UAT_LINES=3000\nFAKE_UAT_LONG_LINE=20000\nFAKE_UAT_SLEEP=0.5\n"})
	sid := w.addSetting(t, pid, map[string]any{"branch": "chatty"})["id"].(string)
	id := w.trigger(t, pid, sid, "")

	msgs, runningPages := w.readAllPages(t, id, "limit=97&wait=20")
	if runningPages == 0 {
		t.Fatal("no page had lines while the build was running")
	}
	b := w.waitEnded(t, id)
	if b["status"] != "complete" {
		t.Fatalf("build %v", b["status"])
	}
	text := w.logText(t, id)
	if got := strings.Join(msgs, "\n") + "\n"; got != text {
		t.Fatalf("pages (%d lines) differ from the text log (%d lines)", len(msgs), strings.Count(text, "\n"))
	}
	fake := 0
	var cut string
	for _, m := range msgs {
		if strings.HasPrefix(m, "LogCook: Display: fake line ") {
			fake++
		}
		if strings.HasPrefix(m, "xxxx") {
			cut = m
		}
	}
	if fake != 3000 {
		t.Fatalf("%d fake lines, want 3000", fake)
	}
	if len(cut) > 16384 || len(cut) < 16000 || !strings.HasSuffix(cut, " [line cut]") || strings.Trim(strings.TrimSuffix(cut, " [line cut]"), "x") != "" {
		t.Fatalf("the 20000-byte line came as %d bytes ending %q", len(cut), cut[max(0, len(cut)-20):])
	}
	// The detail holds the last 200 lines, none over 16 KiB.
	detail := w.do(t, "GET", "/builds/"+id, w.token, nil)
	lines := detail.Body["logLines"].([]any)
	if len(lines) != 200 || lines[199].(map[string]any)["message"] != msgs[len(msgs)-1] || lines[0].(map[string]any)["message"] != msgs[len(msgs)-200] {
		t.Fatalf("logLines: %d", len(lines))
	}

	w.restart(t)
	again, _ := w.readAllPages(t, id, "limit=1000")
	if strings.Join(again, "\n") != strings.Join(msgs, "\n") {
		t.Fatalf("after a restart the pages differ: %d lines, was %d", len(again), len(msgs))
	}
}

// A request with wait answers with no lines at its wait when nothing is written, keeps its
// cursor, and answers when the build ends.
func TestLogPageWaits(t *testing.T) {
	w := newWorld(t)
	pid := w.addShooter(t)
	w.shooter.Commit("slow", "Slow build", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=60\n"})
	sid := w.addSetting(t, pid, map[string]any{"branch": "slow"})["id"].(string)
	id := w.trigger(t, pid, sid, "")
	w.waitStatus(t, id, "running")
	w.waitBuild(t, id, "in its engine step", func(b map[string]any) bool {
		for _, l := range b["logLines"].([]any) {
			if strings.HasPrefix(l.(map[string]any)["message"].(string), "Running: UnrealBuildTool") {
				return true
			}
		}
		return false
	})

	// Read to the end of what is written.
	cursor, seen := "", 0
	for {
		p := w.logPage(t, id, cursor, "limit=5")
		seen += len(p.items)
		if p.cursor == "" {
			t.Fatal("nextCursor null on a running build")
		}
		cursor = p.cursor
		if len(p.items) == 0 {
			break
		}
	}
	// Nothing comes during the engine's pause: the answer comes at the wait, empty, with a cursor.
	quiet := w.logPage(t, id, cursor, "wait=1")
	if len(quiet.items) != 0 || quiet.cursor == "" || quiet.status != "running" {
		t.Fatalf("a quiet wait answered %d items, cursor %q, status %s", len(quiet.items), quiet.cursor, quiet.status)
	}

	// A long wait answers once the build ends (or a line comes), not at its 20 seconds.
	done := make(chan logPage, 1)
	go func() { done <- w.logPage(t, id, quiet.cursor, "wait=20") }()
	if r := w.do(t, "POST", "/builds/"+id+"/cancel", w.token, nil); r.Status != 200 {
		t.Fatalf("cancel: %d %s", r.Status, r.Raw)
	}
	p := <-done
	if len(p.items) == 0 && p.status == "running" {
		t.Fatal("the long wait answered with nothing while the build ran")
	}
	for i, it := range p.items {
		if int(it["seq"].(float64)) != seen+i+1 {
			t.Fatalf("after the wait, line %d has seq %v", seen+i+1, it["seq"])
		}
	}

	// Paging on to the end: the log is not declared over (nextCursor null) before the runner has
	// stopped the engine and written the line saying why the build ended.
	seen += len(p.items)
	var last string
	if len(p.items) > 0 {
		last = p.items[len(p.items)-1]["message"].(string)
	}
	for cursor = p.cursor; cursor != ""; {
		next := w.logPage(t, id, cursor, "wait=20")
		for _, it := range next.items {
			seen++
			if int(it["seq"].(float64)) != seen {
				t.Fatalf("line %d has seq %v", seen, it["seq"])
			}
			last = it["message"].(string)
		}
		cursor = next.cursor
	}
	if last != "kiln: build failed: cancelled" {
		t.Errorf("the last page ends with %q, want the line saying the build was cancelled", last)
	}
}

func TestLogPageRefusesBadInput(t *testing.T) {
	w := newWorld(t)
	pid := w.addShooter(t)
	sid := w.addSetting(t, pid, nil)["id"].(string)
	a := w.trigger(t, pid, sid, "")
	w.waitEnded(t, a)
	b := w.trigger(t, pid, sid, "")
	w.waitEnded(t, b)

	first := w.logPage(t, a, "", "limit=2")
	if first.cursor == "" || len(first.items) != 2 {
		t.Fatalf("first page: %d items, cursor %q", len(first.items), first.cursor)
	}
	tampered := first.cursor[:len(first.cursor)-2] + "AA"
	if tampered == first.cursor {
		tampered = first.cursor[:len(first.cursor)-2] + "BB"
	}
	cases := []struct{ name, build, query, field string }{
		{"TamperedCursor", a, "format=json&cursor=" + url.QueryEscape(tampered), "cursor"},
		{"AnotherBuildsCursor", b, "format=json&cursor=" + url.QueryEscape(first.cursor), "cursor"},
		{"NotACursor", a, "format=json&cursor=page2", "cursor"},
		{"ZeroLimit", a, "format=json&limit=0", "limit"},
		{"WordLimit", a, "format=json&limit=many", "limit"},
		{"LongWait", a, "format=json&wait=21", "wait"},
		{"NegativeWait", a, "format=json&wait=-1", "wait"},
		{"UnknownFormat", a, "format=xml", "format"},
		{"FollowJSON", a, "format=json&follow=1", "follow"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := w.do(t, "GET", "/builds/"+c.build+"/logs?"+c.query, w.token, nil)
			wantError(t, r, 400, "validation_failed")
			if f, _ := r.Body["fields"].(map[string]any); f[c.field] == nil {
				t.Fatalf("fields %v, want %s", r.Body["fields"], c.field)
			}
		})
	}
	// The cursor still works as issued, and a limit over 1000 is taken as 1000.
	next := w.logPage(t, a, first.cursor, "limit=5000")
	if int(next.items[0]["seq"].(float64)) != 3 || next.cursor != "" || next.status != "complete" {
		t.Fatalf("second page starts at %v, cursor %q", next.items[0]["seq"], next.cursor)
	}
}
