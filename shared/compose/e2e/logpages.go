package e2e

import (
	"net/url"
	"testing"
)

// logPage is one page of a build's log as JSON.
type LogPage struct {
	Items  []map[string]any
	Cursor string // "" when nextCursor is null
	Status string
}

func (w *World) LogPage(t *testing.T, id, cursor string, query string) LogPage {
	t.Helper()
	q := "format=json&" + query
	if cursor != "" {
		q += "&cursor=" + url.QueryEscape(cursor)
	}
	r := w.Do(t, "GET", "/builds/"+id+"/logs?"+q, w.Token, nil)
	if r.Status != 200 {
		t.Fatalf("log page: %d %s", r.Status, r.Raw)
	}
	var p LogPage
	for _, it := range r.Body["items"].([]any) {
		p.Items = append(p.Items, it.(map[string]any))
	}
	p.Cursor, _ = r.Body["nextCursor"].(string)
	p.Status, _ = r.Body["buildStatus"].(string)
	return p
}

// readAllPages pages a build's log from the start until nextCursor is null, checking that the
// lines come numbered 1, 2, 3, ... without repeats or gaps; it returns them and how many pages
// had lines while the build was running.
func (w *World) ReadAllPages(t *testing.T, id, query string) (msgs []string, runningPages int) {
	t.Helper()
	cursor := ""
	for range 10000 {
		p := w.LogPage(t, id, cursor, query)
		for _, it := range p.Items {
			if seq := int(it["seq"].(float64)); seq != len(msgs)+1 {
				t.Fatalf("line %d came as seq %d", len(msgs)+1, seq)
			}
			msgs = append(msgs, it["message"].(string))
		}
		if len(p.Items) > 0 && p.Status == "running" {
			runningPages++
		}
		if p.Cursor == "" {
			if p.Status == "running" || p.Status == "pending" {
				t.Fatalf("nextCursor null while the build is %s", p.Status)
			}
			return msgs, runningPages
		}
		cursor = p.Cursor
	}
	t.Fatal("the log never ended")
	return nil, 0
}
