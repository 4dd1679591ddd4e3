// Package logstoretest is the contract suite every build log store passes: lines numbered 1, 2,
// 3, ... per build, appended in chunks by one writer, read from any number on, exactly once and
// in order, also while the writer goes on; long lines cut; numbers kept across a restart.
package logstoretest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// Store is the log store under test.
type Store interface {
	Append(ctx context.Context, orgID, buildID string, first int64, lines ...kiln.LogLine) error
	Read(ctx context.Context, orgID, buildID string, from int64, max int) ([]buildlog.Line, error)
	Last(ctx context.Context, orgID, buildID string) (int64, error)
	Delete(ctx context.Context, orgID, buildID string) error
}

// Factory returns a fresh, empty store and a function that opens the same storage again, as a
// restarted process would.
type Factory func(t *testing.T) (s Store, reopen func() Store)

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// line is the n-th line of a test log.
func line(n int64) kiln.LogLine {
	lvl := kiln.LevelInfo
	if n%7 == 0 {
		lvl = kiln.LevelWarn
	}
	return kiln.LogLine{Time: t0.Add(time.Duration(n) * time.Millisecond), Level: lvl, Message: fmt.Sprintf("line %d \"quoted\" \t tab", n)}
}

func lines(from, to int64) []kiln.LogLine {
	var out []kiln.LogLine
	for n := from; n <= to; n++ {
		out = append(out, line(n))
	}
	return out
}

// wantLines checks that got is exactly lines from..to of the test log.
func wantLines(t *testing.T, got []buildlog.Line, from, to int64) {
	t.Helper()
	if int64(len(got)) != to-from+1 && !(to < from && len(got) == 0) {
		t.Fatalf("read %d lines, want %d..%d", len(got), from, to)
	}
	for i, l := range got {
		n := from + int64(i)
		want := line(n)
		if l.Seq != n || l.Message != want.Message || l.Level != want.Level || !l.Time.Equal(want.Time) || l.Time.Location() != time.UTC {
			t.Fatalf("line %d: %+v, want seq %d %+v", i, l, n, want)
		}
	}
}

// Run runs the suite.
func Run(t *testing.T, open Factory) {
	ctx := context.Background()
	ids := func() (string, string) { return kiln.NewID(), kiln.NewID() }

	t.Run("EmptyLog", func(t *testing.T) {
		s, _ := open(t)
		org, b := ids()
		if n, err := s.Last(ctx, org, b); err != nil || n != 0 {
			t.Fatalf("last of a missing log: %d %v", n, err)
		}
		if got, err := s.Read(ctx, org, b, 1, 10); err != nil || len(got) != 0 {
			t.Fatalf("read of a missing log: %v %v", got, err)
		}
	})

	t.Run("AppendAndReadFromAnyNumber", func(t *testing.T) {
		s, _ := open(t)
		org, b := ids()
		if err := s.Append(ctx, org, b, 1, lines(1, 5)...); err != nil {
			t.Fatal(err)
		}
		for from := int64(6); from <= 300; from += 37 {
			to := min(from+36, 300)
			if err := s.Append(ctx, org, b, from, lines(from, to)...); err != nil {
				t.Fatal(err)
			}
		}
		all, err := s.Read(ctx, org, b, 1, 1000)
		if err != nil {
			t.Fatal(err)
		}
		wantLines(t, all, 1, 300)
		for _, c := range []struct {
			from     int64
			max      int
			wantFrom int64
			wantTo   int64
		}{
			{1, 1, 1, 1}, {5, 2, 5, 6}, {6, 37, 6, 42}, {150, 10, 150, 159}, {290, 50, 290, 300},
			{300, 5, 300, 300}, {301, 5, 301, 300}, {0, 3, 1, 3}, {-4, 3, 1, 3},
		} {
			got, err := s.Read(ctx, org, b, c.from, c.max)
			if err != nil {
				t.Fatal(err)
			}
			wantLines(t, got, c.wantFrom, c.wantTo)
		}
		if n, err := s.Last(ctx, org, b); err != nil || n != 300 {
			t.Fatalf("last: %d %v", n, err)
		}
		// At most buildlog.MaxRead lines a read.
		if got, _ := s.Read(ctx, org, b, 1, 1_000_000); len(got) != 300 {
			t.Fatalf("read with a huge max: %d", len(got))
		}
	})

	t.Run("RetriedAppendWritesOnce", func(t *testing.T) {
		s, _ := open(t)
		org, b := ids()
		for range 3 {
			if err := s.Append(ctx, org, b, 1, lines(1, 10)...); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Append(ctx, org, b, 11, lines(11, 20)...); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(ctx, org, b, 11, lines(11, 20)...); err != nil {
			t.Fatal(err)
		}
		got, _ := s.Read(ctx, org, b, 1, 100)
		wantLines(t, got, 1, 20)
	})

	t.Run("NothingIsReadPastAGap", func(t *testing.T) {
		s, _ := open(t)
		org, b := ids()
		if err := s.Append(ctx, org, b, 1, lines(1, 10)...); err != nil {
			t.Fatal(err)
		}
		_ = s.Append(ctx, org, b, 15, lines(15, 20)...) // refused, or kept out of reads
		got, err := s.Read(ctx, org, b, 1, 100)
		if err != nil {
			t.Fatal(err)
		}
		wantLines(t, got, 1, 10)
		if got, _ := s.Read(ctx, org, b, 11, 100); len(got) != 0 {
			t.Fatalf("read past a gap: %+v", got)
		}
	})

	t.Run("LongLinesAreCut", func(t *testing.T) {
		s, _ := open(t)
		org, b := ids()
		exact := strings.Repeat("x", buildlog.MaxLineBytes)
		long := strings.Repeat("é", buildlog.MaxLineBytes) // 2 bytes each: twice too long
		in := []kiln.LogLine{{Time: t0, Level: kiln.LevelInfo, Message: exact}, {Time: t0, Level: kiln.LevelError, Message: long}}
		if err := s.Append(ctx, org, b, 1, in...); err != nil {
			t.Fatal(err)
		}
		if in[1].Message != long {
			t.Fatal("the caller's lines were changed")
		}
		got, err := s.Read(ctx, org, b, 1, 10)
		if err != nil || len(got) != 2 {
			t.Fatalf("read: %d %v", len(got), err)
		}
		if got[0].Message != exact {
			t.Fatalf("a line of exactly %d bytes was changed", buildlog.MaxLineBytes)
		}
		m := got[1].Message
		if len(m) > buildlog.MaxLineBytes || len(m) < buildlog.MaxLineBytes-4 || !strings.HasSuffix(m, buildlog.CutMarker) ||
			!utf8.ValidString(m) || !strings.HasPrefix(long, strings.TrimSuffix(m, buildlog.CutMarker)) || got[1].Level != kiln.LevelError {
			t.Fatalf("cut line: %d bytes, ends %q", len(m), m[max(0, len(m)-20):])
		}
	})

	t.Run("ManyLargeLinesInOneAppend", func(t *testing.T) {
		s, _ := open(t)
		org, b := ids()
		var in []kiln.LogLine
		for i := range 400 {
			in = append(in, kiln.LogLine{Time: t0, Level: kiln.LevelInfo, Message: fmt.Sprintf("%04d", i) + strings.Repeat("\x01\"", buildlog.MaxLineBytes/2)})
		}
		if err := s.Append(ctx, org, b, 1, in...); err != nil {
			t.Fatal(err)
		}
		var got []buildlog.Line
		for len(got) < len(in) {
			page, err := s.Read(ctx, org, b, int64(len(got))+1, 150)
			if err != nil || len(page) == 0 {
				t.Fatalf("read from %d: %d lines, %v", len(got)+1, len(page), err)
			}
			got = append(got, page...)
		}
		for i, l := range got {
			if l.Seq != int64(i+1) || l.Message != buildlog.Cut(in[i].Message) {
				t.Fatalf("line %d: seq %d, %.10q", i, l.Seq, l.Message)
			}
		}
		if n, _ := s.Last(ctx, org, b); n != 400 {
			t.Fatalf("last %d", n)
		}
	})

	t.Run("RestartKeepsNumbers", func(t *testing.T) {
		s, reopen := open(t)
		org, b := ids()
		if err := s.Append(ctx, org, b, 1, lines(1, 42)...); err != nil {
			t.Fatal(err)
		}
		s2 := reopen()
		if n, err := s2.Last(ctx, org, b); err != nil || n != 42 {
			t.Fatalf("last after restart: %d %v", n, err)
		}
		if err := s2.Append(ctx, org, b, 43, lines(43, 50)...); err != nil {
			t.Fatal(err)
		}
		got, _ := s2.Read(ctx, org, b, 40, 100)
		wantLines(t, got, 40, 50)
	})

	t.Run("ReadersSeeEachLineOnceWhileTheWriterWrites", func(t *testing.T) {
		s, _ := open(t)
		org, b := ids()
		const total = 1500
		var wg sync.WaitGroup
		wg.Add(1)
		writeErr := make(chan error, 1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(1, 2))
			for next := int64(1); next <= total; {
				to := min(next+rnd.Int64N(40), total)
				if err := s.Append(ctx, org, b, next, lines(next, to)...); err != nil {
					writeErr <- err
					return
				}
				next = to + 1
			}
		}()
		readers := 3
		errs := make(chan error, readers)
		for r := range readers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rnd := rand.New(rand.NewPCG(uint64(r), 9))
				next := int64(1)
				deadline := time.Now().Add(2 * time.Minute)
				for next <= total && time.Now().Before(deadline) {
					page, err := s.Read(ctx, org, b, next, 1+rnd.IntN(90))
					if err != nil {
						errs <- err
						return
					}
					for _, l := range page {
						if l.Seq != next || l.Message != line(next).Message {
							errs <- fmt.Errorf("reader %d: got seq %d %q, want %d", r, l.Seq, l.Message, next)
							return
						}
						next++
					}
				}
				if next <= total {
					errs <- fmt.Errorf("reader %d stopped at %d", r, next)
				}
			}()
		}
		wg.Wait()
		close(errs)
		close(writeErr)
		for err := range writeErr {
			t.Fatal(err)
		}
		for err := range errs {
			t.Fatal(err)
		}
	})

	t.Run("LogsAreApartAndDeleted", func(t *testing.T) {
		s, _ := open(t)
		org, b := ids()
		org2, b2 := ids()
		if err := s.Append(ctx, org, b, 1, lines(1, 3)...); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(ctx, org2, b2, 1, lines(1, 2)...); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Read(ctx, org2, b, 1, 10); len(got) != 0 {
			t.Fatalf("another organization's id read a log: %d lines", len(got))
		}
		if err := s.Delete(ctx, org, b); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.Last(ctx, org, b); n != 0 {
			t.Fatalf("last after delete: %d", n)
		}
		if got, _ := s.Read(ctx, org2, b2, 1, 10); len(got) != 2 {
			t.Fatalf("delete took another log: %d lines left", len(got))
		}
		if err := s.Delete(ctx, org, b); err != nil {
			t.Fatalf("deleting twice: %v", err)
		}
	})

	t.Run("BadInput", func(t *testing.T) {
		s, _ := open(t)
		org, b := ids()
		if err := s.Append(ctx, "../../etc", b, 1, lines(1, 1)...); err == nil {
			t.Fatal("a bad organization id was accepted")
		}
		if _, err := s.Read(ctx, org, "bad/id", 1, 1); err == nil {
			t.Fatal("a bad build id was read")
		}
		if err := s.Append(ctx, org, b, 0, lines(1, 1)...); err == nil {
			t.Fatal("sequence number 0 was accepted")
		}
		if n, _ := s.Last(ctx, org, b); n != 0 {
			t.Fatalf("a refused append wrote: last %d", n)
		}
	})
}
