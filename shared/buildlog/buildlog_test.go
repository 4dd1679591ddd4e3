package buildlog

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

func TestAppendTailRead(t *testing.T) {
	f, err := NewFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	org, build := kiln.NewID(), kiln.NewID()
	if lines, err := f.Tail(ctx, org, build, 10); err != nil || len(lines) != 0 {
		t.Fatalf("missing log: %v %v", lines, err)
	}
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for i := 0; i < 250; i++ {
		lvl := kiln.LevelInfo
		if i%50 == 0 {
			lvl = kiln.LevelError
		}
		if err := f.Append(ctx, org, build, kiln.LogLine{Time: t0.Add(time.Duration(i) * time.Millisecond), Level: lvl, Message: fmt.Sprintf("line %d \"quoted\"", i)}); err != nil {
			t.Fatal(err)
		}
	}
	tail, err := f.Tail(ctx, org, build, 200)
	if err != nil || len(tail) != 200 || tail[0].Message != `line 50 "quoted"` || tail[199].Message != `line 249 "quoted"` || tail[0].Level != kiln.LevelError || !tail[0].Time.Equal(t0.Add(50*time.Millisecond)) {
		t.Fatalf("tail: %d lines, first %+v, %v", len(tail), tail[0], err)
	}
	// Reading on from an offset sees only new lines; a half-written line waits.
	var seen []string
	off, err := f.Read(ctx, org, build, 0, func(l kiln.LogLine) error { seen = append(seen, l.Message); return nil })
	if err != nil || len(seen) != 250 {
		t.Fatalf("read: %d %v", len(seen), err)
	}
	p, _ := f.path(org, build)
	fh, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString(`{"t":1,"l":"info","m":"half`)
	fh.Close()
	seen = nil
	off2, _ := f.Read(ctx, org, build, off, func(l kiln.LogLine) error { seen = append(seen, l.Message); return nil })
	if len(seen) != 0 || off2 != off {
		t.Fatalf("a partial line was read: %v", seen)
	}
	if _, err := f.path("../../etc", build); err == nil {
		t.Fatal("a bad id made a path")
	}
}

func TestTailOfALongLog(t *testing.T) {
	f, _ := NewFiles(t.TempDir())
	ctx := context.Background()
	org, build := kiln.NewID(), kiln.NewID()
	var batch []kiln.LogLine
	for i := 0; i < 20000; i++ {
		batch = append(batch, kiln.LogLine{Time: time.Unix(0, 0), Level: kiln.LevelInfo, Message: fmt.Sprintf("line %05d of a long engine log", i)})
	}
	if err := f.Append(ctx, org, build, batch...); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 200, 5000} {
		tail, err := f.Tail(ctx, org, build, n)
		if err != nil || len(tail) != n || tail[n-1].Message != "line 19999 of a long engine log" || tail[0].Message != fmt.Sprintf("line %05d of a long engine log", 20000-n) {
			t.Fatalf("tail %d: %d lines, %v", n, len(tail), err)
		}
	}
}
