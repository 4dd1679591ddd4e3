package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// logServer serves the API with a build (running or ended) whose log holds n lines of size
// bytes each, answers buffered (the AWS deployment) or not (one machine).
func logServer(t *testing.T, buffered bool, status kiln.BuildStatus, n, size int) (srv *httptest.Server, token, buildID string) {
	t.Helper()
	f := newDownloadFixture(t)
	logs, err := buildlog.NewFiles(filepath.Join(t.TempDir(), "logs"))
	if err != nil {
		t.Fatal(err)
	}
	b := f.build
	b.Status = status
	if err := f.st.UpdateBuild(f.ctx, b, kiln.StatusPending, kiln.FieldStatus); err != nil {
		t.Fatal(err)
	}
	lines := make([]kiln.LogLine, n)
	for i := range lines {
		msg := fmt.Sprintf("line %06d ", i+1)
		lines[i] = kiln.LogLine{Time: time.Now(), Level: kiln.LevelInfo, Message: msg + strings.Repeat("x", size-len(msg))}
	}
	if err := logs.Append(context.Background(), f.org, b.ID, 1, lines...); err != nil {
		t.Fatal(err)
	}
	keys, _ := keyring.New(make([]byte, keyring.MasterKeySize))
	srv = httptest.NewServer(New(Config{Store: f.st, Keys: keys, Logs: logs, BufferedAnswers: buffered, Now: f.now}))
	t.Cleanup(srv.Close)
	return srv, f.created.Token, b.ID
}

func getLog(t *testing.T, srv *httptest.Server, token, path string) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil && ctx.Err() == nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// Behind a buffering proxy (the AWS API) following a log is refused with log_paging_required,
// as is a text log past MaxBufferedTextLog; a smaller one is answered whole. One machine still
// streams and answers any size.
func TestLogTextWhereAnswersAreBuffered(t *testing.T) {
	bigLines := MaxBufferedTextLog/1000 + 10 // lines of 1000 bytes (and a newline) past the bound
	for _, tc := range []struct {
		name     string
		buffered bool
		status   kiln.BuildStatus
		lines    int
		query    string
		want     int
		wantCode string
	}{
		{"follow refused when buffered", true, kiln.StatusRunning, 3, "?follow=1", 400, eLogPagingRequired},
		{"large text refused when buffered", true, kiln.StatusComplete, bigLines, "", 400, eLogPagingRequired},
		{"small text answered when buffered", true, kiln.StatusComplete, 3, "", 200, ""},
		{"large text answered on one machine", false, kiln.StatusComplete, bigLines, "", 200, ""},
		{"follow streams on one machine", false, kiln.StatusComplete, 3, "?follow=1", 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, token, id := logServer(t, tc.buffered, tc.status, tc.lines, 1000)
			status, body := getLog(t, srv, token, "/builds/"+id+"/logs"+tc.query)
			if status != tc.want {
				t.Fatalf("status %d, want %d: %.300s", status, tc.want, body)
			}
			if tc.wantCode != "" {
				var e api.ErrorBody
				if err := json.Unmarshal(body, &e); err != nil || e.Code != tc.wantCode || !strings.Contains(e.Message, "format=json") {
					t.Fatalf("error %q %q, want %s naming format=json", e.Code, e.Message, tc.wantCode)
				}
				return
			}
			if got := strings.Count(string(body), "\n"); got != tc.lines {
				t.Fatalf("%d lines, want %d", got, tc.lines)
			}
		})
	}
}

// A JSON page stops before MaxLogPageBytes, on both deployments, and its cursor continues at
// the first line it left out, so paging reads every line once.
func TestLogPageBytesAreBounded(t *testing.T) {
	const lines, size = 1000, 16 << 10 // 16 MB of log: 1000 lines is one full page by count
	for _, buffered := range []bool{false, true} {
		t.Run(fmt.Sprintf("buffered=%v", buffered), func(t *testing.T) {
			srv, token, id := logServer(t, buffered, kiln.StatusComplete, lines, size)
			next, pages, cursor := int64(1), 0, ""
			for {
				path := "/builds/" + id + "/logs?format=json&limit=1000"
				if cursor != "" {
					path += "&cursor=" + cursor
				}
				status, body := getLog(t, srv, token, path)
				if status != 200 {
					t.Fatalf("status %d: %.300s", status, body)
				}
				if len(body) > MaxLogPageBytes+1024 {
					t.Fatalf("a page of %d bytes, want at most about %d", len(body), MaxLogPageBytes)
				}
				var p api.LogPage
				if err := json.Unmarshal(body, &p); err != nil {
					t.Fatal(err)
				}
				pages++
				for _, it := range p.Items {
					if it.Seq != next {
						t.Fatalf("page %d: seq %d, want %d", pages, it.Seq, next)
					}
					next++
				}
				if p.NextCursor == nil {
					break
				}
				cursor = *p.NextCursor
			}
			if next != lines+1 || pages < lines*size/MaxLogPageBytes {
				t.Fatalf("read %d lines in %d pages, want %d lines in more than %d pages", next-1, pages, lines, lines*size/MaxLogPageBytes)
			}
		})
	}
}
