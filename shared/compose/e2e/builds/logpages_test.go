package builds

import (
	"net/url"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// Pages read while the build writes hold every line once, in order, the same as the text log;
// long lines are cut; a restart keeps the numbers.
func TestLogPagesWhileTheBuildWrites(t *testing.T) { e2e.Both(t, logPagesWhileTheBuildWrites) }

func logPagesWhileTheBuildWrites(t *testing.T, dep e2e.Deployment) {
	w := e2e.NewWorld(t, dep)
	pid := w.AddShooter(t)
	w.Shooter.Commit("chatty", "A chatty cook", "Ada Lovelace", map[string]string{
		"Shooter/FakeUAT.env": "FAKE_UAT_LINES=3000\nFAKE_UAT_LONG_LINE=20000\nFAKE_UAT_SLEEP=0.5\n"})
	sid := w.AddSetting(t, pid, map[string]any{"branch": "chatty"})["id"].(string)
	id := w.Trigger(t, pid, sid, "")

	msgs, runningPages := w.ReadAllPages(t, id, "limit=97&wait=20")
	if runningPages == 0 {
		t.Fatal("no page had lines while the build was running")
	}
	b := w.WaitEnded(t, id)
	if b["status"] != "complete" {
		t.Fatalf("build %v", b["status"])
	}
	text := w.LogText(t, id)
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
	detail := w.Do(t, "GET", "/builds/"+id, w.Token, nil)
	lines := detail.Body["logLines"].([]any)
	if len(lines) != 200 || lines[199].(map[string]any)["message"] != msgs[len(msgs)-1] || lines[0].(map[string]any)["message"] != msgs[len(msgs)-200] {
		t.Fatalf("logLines: %d", len(lines))
	}

	w.Restart(t)
	again, _ := w.ReadAllPages(t, id, "limit=1000")
	if strings.Join(again, "\n") != strings.Join(msgs, "\n") {
		t.Fatalf("after a restart the pages differ: %d lines, was %d", len(again), len(msgs))
	}
}

// A request with wait answers with no lines at its wait when nothing is written, keeps its
// cursor, and answers when the build ends.
func TestLogPageWaits(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	pid := w.AddShooter(t)
	w.Shooter.Commit("slow", "Slow build", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=60\n"})
	sid := w.AddSetting(t, pid, map[string]any{"branch": "slow"})["id"].(string)
	id := w.Trigger(t, pid, sid, "")
	w.WaitStatus(t, id, "running")
	w.WaitBuild(t, id, "in its engine step", func(b map[string]any) bool {
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
		p := w.LogPage(t, id, cursor, "limit=5")
		seen += len(p.Items)
		if p.Cursor == "" {
			t.Fatal("nextCursor null on a running build")
		}
		cursor = p.Cursor
		if len(p.Items) == 0 {
			break
		}
	}
	// Nothing comes during the engine's pause: the answer comes at the wait, empty, with a cursor.
	quiet := w.LogPage(t, id, cursor, "wait=1")
	if len(quiet.Items) != 0 || quiet.Cursor == "" || quiet.Status != "running" {
		t.Fatalf("a quiet wait answered %d items, cursor %q, status %s", len(quiet.Items), quiet.Cursor, quiet.Status)
	}

	// A long wait answers once the build ends (or a line comes), not at its 20 seconds.
	done := make(chan e2e.LogPage, 1)
	go func() { done <- w.LogPage(t, id, quiet.Cursor, "wait=20") }()
	if r := w.Do(t, "POST", "/builds/"+id+"/cancel", w.Token, nil); r.Status != 200 {
		t.Fatalf("cancel: %d %s", r.Status, r.Raw)
	}
	p := <-done
	if len(p.Items) == 0 && p.Status == "running" {
		t.Fatal("the long wait answered with nothing while the build ran")
	}
	for i, it := range p.Items {
		if int(it["seq"].(float64)) != seen+i+1 {
			t.Fatalf("after the wait, line %d has seq %v", seen+i+1, it["seq"])
		}
	}

	// Paging on to the end: the log is not declared over (nextCursor null) before the runner has
	// stopped the engine and written the line saying why the build ended.
	seen += len(p.Items)
	var last string
	if len(p.Items) > 0 {
		last = p.Items[len(p.Items)-1]["message"].(string)
	}
	for cursor = p.Cursor; cursor != ""; {
		next := w.LogPage(t, id, cursor, "wait=20")
		for _, it := range next.Items {
			seen++
			if int(it["seq"].(float64)) != seen {
				t.Fatalf("line %d has seq %v", seen, it["seq"])
			}
			last = it["message"].(string)
		}
		cursor = next.Cursor
	}
	if last != "kiln: build failed: cancelled" {
		t.Errorf("the last page ends with %q, want the line saying the build was cancelled", last)
	}
}

func TestLogPageRefusesBadInput(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)
	a := w.Trigger(t, pid, sid, "")
	w.WaitEnded(t, a)
	b := w.Trigger(t, pid, sid, "")
	w.WaitEnded(t, b)

	first := w.LogPage(t, a, "", "limit=2")
	if first.Cursor == "" || len(first.Items) != 2 {
		t.Fatalf("first page: %d items, cursor %q", len(first.Items), first.Cursor)
	}
	tampered := first.Cursor[:len(first.Cursor)-2] + "AA"
	if tampered == first.Cursor {
		tampered = first.Cursor[:len(first.Cursor)-2] + "BB"
	}
	cases := []struct{ name, build, query, field string }{
		{"TamperedCursor", a, "format=json&cursor=" + url.QueryEscape(tampered), "cursor"},
		{"AnotherBuildsCursor", b, "format=json&cursor=" + url.QueryEscape(first.Cursor), "cursor"},
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
			r := w.Do(t, "GET", "/builds/"+c.build+"/logs?"+c.query, w.Token, nil)
			e2e.WantError(t, r, 400, "validation_failed")
			if f, _ := r.Body["fields"].(map[string]any); f[c.field] == nil {
				t.Fatalf("fields %v, want %s", r.Body["fields"], c.field)
			}
		})
	}
	// The cursor still works as issued, and a limit over 1000 is taken as 1000.
	next := w.LogPage(t, a, first.Cursor, "limit=5000")
	if int(next.Items[0]["seq"].(float64)) != 3 || next.Cursor != "" || next.Status != "complete" {
		t.Fatalf("second page starts at %v, cursor %q", next.Items[0]["seq"], next.Cursor)
	}
}
