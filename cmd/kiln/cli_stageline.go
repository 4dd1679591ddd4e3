package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/kilnbuild/kiln/shared/client"
	"github.com/kilnbuild/kiln/shared/wake"
)

// stageEvery is how often a followed build's stage and time left are asked for.
var stageEvery = 2 * time.Second

// stageLine is the one line on a terminal's standard error that says a followed build's stage and
// time left, rewritten in place (\r); log lines printed meanwhile clear it first and it is drawn
// again below them. Ended, it is left on its own line (a newline). Nil when standard error is
// not a terminal: nothing is drawn then.
type stageLine struct {
	mu    sync.Mutex
	w     io.Writer
	text  string
	shown bool
}

// newStageLine is a stage line on stderr when it is a terminal, else nil.
func newStageLine(stderr io.Writer) *stageLine {
	if f, ok := stderr.(*os.File); ok && isTerminal(f) {
		return &stageLine{w: f}
	}
	return nil
}

// clearLine is a carriage return and "erase to the end of the line".
const clearLine = "\r\x1b[K"

// set shows text ("" clears the line).
func (s *stageLine) set(text string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.text = text
	s.draw()
}

func (s *stageLine) draw() {
	if s.text == "" {
		if s.shown {
			fmt.Fprint(s.w, clearLine)
		}
		s.shown = false
		return
	}
	fmt.Fprint(s.w, clearLine+s.text)
	s.shown = true
}

// around runs print (a log line going to the same terminal) with the stage line out of its way.
func (s *stageLine) around(print func() error) error {
	if s == nil {
		return print()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shown {
		fmt.Fprint(s.w, clearLine)
	}
	err := print()
	if s.text != "" {
		s.draw()
	}
	return err
}

// end leaves the last text on its own line.
func (s *stageLine) end() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shown {
		fmt.Fprintln(s.w)
	}
	s.shown, s.text = false, ""
}

// watch asks for build id's progress every stageEvery and shows it, until ctx ends.
func (s *stageLine) watch(ctx context.Context, c *client.Client, id string) {
	if s == nil {
		return
	}
	show := func(ctx context.Context) bool {
		// The last text stays once the build ended (until end leaves it on its own line).
		if b, err := c.GetBuild(ctx, id); err == nil && ctx.Err() == nil && progressText(&b.Build) != "" {
			s.set(progressText(&b.Build))
		}
		return true
	}
	show(ctx)
	wake.Every(ctx, stageEvery, show)
}

// progressText says where a running build is: "stage cook · 42% · about 3m10s left (from 5
// builds)", "stage cook · 12m0s, longer than the last 5 builds", or its stage alone without an
// estimate; "" for a build not running.
func progressText(b *client.Build) string {
	if b.Status != "running" {
		return ""
	}
	stage := "starting"
	if b.Stage != nil {
		stage = "stage " + *b.Stage
	}
	p := b.Progress
	if p == nil {
		return stage
	}
	from := "the last build"
	if p.BasedOn > 1 {
		from = fmt.Sprintf("the last %d builds", p.BasedOn)
	}
	elapsed := (time.Duration(p.ElapsedMs) * time.Millisecond).Round(time.Second)
	if p.Overrun || p.RemainingMs == nil {
		return fmt.Sprintf("%s · %s, longer than %s", stage, elapsed, from)
	}
	left := (time.Duration(*p.RemainingMs) * time.Millisecond).Round(time.Second)
	return fmt.Sprintf("%s · %d%% · about %s left (from %s)", stage, p.Percent, left, from)
}
