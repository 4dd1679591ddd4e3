package buildlog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kilnbuild/kiln/shared/kiln"
)

func TestCut(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		wantCut bool
	}{
		{"Short", "hello", false},
		{"Exactly", strings.Repeat("a", MaxLineBytes), false},
		{"OneOver", strings.Repeat("a", MaxLineBytes+1), true},
		{"MultibyteAtTheEdge", strings.Repeat("a", MaxLineBytes-len(CutMarker)-1) + strings.Repeat("€", 10), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Cut(c.in)
			if !c.wantCut {
				if got != c.in {
					t.Fatal("changed a line that fits")
				}
				return
			}
			if len(got) > MaxLineBytes || !strings.HasSuffix(got, CutMarker) || !utf8.ValidString(got) ||
				!strings.HasPrefix(c.in, strings.TrimSuffix(got, CutMarker)) {
				t.Fatalf("cut to %d bytes: ...%q", len(got), got[len(got)-20:])
			}
			if Cut(got) != got {
				t.Fatal("cutting a cut line changed it")
			}
		})
	}
}

func line(n int) kiln.LogLine {
	return kiln.LogLine{Time: time.UnixMilli(int64(n)).UTC(), Level: kiln.LevelInfo, Message: fmt.Sprintf("line %d", n)}
}

func messages(ls []Line) string {
	var b strings.Builder
	for _, l := range ls {
		fmt.Fprintf(&b, "%d:%s;", l.Seq, l.Message)
	}
	return b.String()
}

// A line half written when the process died is never read, and the next append replaces it.
func TestHalfWrittenLineIsReplaced(t *testing.T) {
	f, _ := NewFiles(t.TempDir())
	ctx := context.Background()
	org, b := kiln.NewID(), kiln.NewID()
	if err := f.Append(ctx, org, b, 1, line(1), line(2)); err != nil {
		t.Fatal(err)
	}
	p, _ := f.paths(org, b)
	fh, _ := os.OpenFile(p.log, os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString(`{"s":3,"t":1,"l":"info","m":"half`)
	fh.Close()
	if got, _ := f.Read(ctx, org, b, 1, 10); messages(got) != "1:line 1;2:line 2;" {
		t.Fatalf("read %s", messages(got))
	}
	if n, _ := f.Last(ctx, org, b); n != 2 {
		t.Fatalf("last %d", n)
	}
	if err := f.Append(ctx, org, b, 3, line(3)); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.Read(ctx, org, b, 1, 10); messages(got) != "1:line 1;2:line 2;3:line 3;" {
		t.Fatalf("after the next append: %s", messages(got))
	}
}

// A log written before sequence numbers (no "s", no index) is numbered by position.
func TestLogWithoutNumbers(t *testing.T) {
	dir := t.TempDir()
	f, _ := NewFiles(dir)
	ctx := context.Background()
	org, b := kiln.NewID(), kiln.NewID()
	os.MkdirAll(filepath.Join(dir, org), 0o700)
	os.WriteFile(filepath.Join(dir, org, b+".jsonl"), []byte(
		`{"t":1,"l":"info","m":"old 1"}`+"\n"+`{"t":2,"l":"warn","m":"old 2"}`+"\n"+`{"t":3,"l":"error","m":"old 3"}`+"\n"), 0o600)
	if got, _ := f.Read(ctx, org, b, 2, 10); messages(got) != "2:old 2;3:old 3;" || got[1].Level != kiln.LevelError {
		t.Fatalf("read %s", messages(got))
	}
	if err := f.Append(ctx, org, b, 4, line(4)); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.Read(ctx, org, b, 3, 10); messages(got) != "3:old 3;4:line 4;" {
		t.Fatalf("after an append: %s", messages(got))
	}
}

// The index holds one entry per append, and a read from the middle starts at the entry of the
// append holding its first line.
func TestReadsFollowTheIndex(t *testing.T) {
	f, _ := NewFiles(t.TempDir())
	ctx := context.Background()
	org, b := kiln.NewID(), kiln.NewID()
	for n := 1; n <= 100; n += 10 {
		var batch []kiln.LogLine
		for i := n; i < n+10; i++ {
			batch = append(batch, line(i))
		}
		if err := f.Append(ctx, org, b, int64(n), batch...); err != nil {
			t.Fatal(err)
		}
	}
	p, _ := f.paths(org, b)
	fi, _ := os.Stat(p.idx)
	if fi.Size() != 10*indexEntry {
		t.Fatalf("index of %d bytes, want one entry per append", fi.Size())
	}
	got, _ := f.Read(ctx, org, b, 55, 3)
	if messages(got) != "55:line 55;56:line 56;57:line 57;" {
		t.Fatalf("read %s", messages(got))
	}
	at51, _ := indexedAtOrBefore(p.idx, 55)
	at41, _ := indexedAtOrBefore(p.idx, 45)
	if at51.seq != 51 || at41.seq != 41 || at41.off >= at51.off {
		t.Fatalf("entries %+v %+v", at41, at51)
	}
}

func TestWatchWakesOnAppend(t *testing.T) {
	f, _ := NewFiles(t.TempDir())
	ctx := context.Background()
	org, b := kiln.NewID(), kiln.NewID()
	c, stop := f.Watch(org, b)
	other, stopOther := f.Watch(org, kiln.NewID())
	defer stopOther()
	if err := f.Append(ctx, org, b, 1, line(1)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c:
	default:
		t.Fatal("no wake after an append")
	}
	select {
	case <-other:
		t.Fatal("another build's watcher woke")
	default:
	}
	stop()
	if len(f.watches.m) != 1 {
		t.Fatalf("watchers left: %d", len(f.watches.m))
	}
}
