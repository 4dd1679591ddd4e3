package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCLIDownloadProgress: a progress bar on a terminal, none when standard error is a pipe; the
// bar's line ends before the command prints the file it wrote on the same terminal.
func TestCLIDownloadProgress(t *testing.T) {
	w := newCLIWorld(t)
	if _, _, code, err := runKiln(t, w.env, "builds", "trigger", w.project, w.settings["main"], "--follow"); code != 0 {
		t.Fatalf("trigger: exit %d (%v)", code, err)
	}
	var page struct{ Items []struct{ ID string } }
	w.api(t, "GET", "/builds?status=complete", nil, 200, &page)
	id := page.Items[0].ID
	dir := t.TempDir()

	downloadTo := func(t *testing.T, stdout io.Writer, stderr *os.File, name string) {
		t.Helper()
		err := run(context.Background(), []string{"artifacts", "download", id, "-o", filepath.Join(dir, name)}, w.env, stdout, stderr)
		if err != nil {
			t.Fatal(err)
		}
		stderr.Close()
	}
	download := func(t *testing.T, stderr *os.File, name string) {
		t.Helper()
		var out bytes.Buffer
		downloadTo(t, &out, stderr, name)
	}

	t.Run("pipe", func(t *testing.T) {
		r, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		download(t, pw, "piped.tar.gz")
		got, _ := io.ReadAll(r)
		if len(got) != 0 {
			t.Errorf("wrote %q to a pipe", got)
		}
	})

	t.Run("terminal", func(t *testing.T) {
		pts, read := terminal(t)
		download(t, pts, "tty.tar.gz")
		if s := read(); !strings.Contains(s, "] 100% ") || !strings.Contains(s, "[#") {
			t.Errorf("no progress bar on the terminal: %q", s)
		}
	})

	t.Run("terminal for both outputs", func(t *testing.T) {
		pts, read := terminal(t)
		dst := filepath.Join(dir, "both.tar.gz")
		downloadTo(t, pts, pts, "both.tar.gz")
		s := read()
		bar := regexp.MustCompile(`\] 100% [0-9.]+ [KMG]?i?B / [0-9.]+ [KMG]?i?B\r?\n` + regexp.QuoteMeta(dst) + ` \(`)
		if !bar.MatchString(s) {
			t.Errorf("the bar's line does not end before the file is named: %q", s)
		}
	})
}
