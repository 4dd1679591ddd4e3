package buildsteps

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/kilnbuild/kiln/shared/proctree"
)

const (
	// maxLineBytes is the longest output line kept whole; longer lines are cut.
	maxLineBytes = 1 << 20
	// killGrace is how long a cancelled process tree has between SIGTERM and SIGKILL.
	killGrace = 5 * time.Second
	// drainWait is how long output is read after the group is gone, in case a process that left
	// the group (setsid) still holds the pipe.
	drainWait = 2 * time.Second
)

// runGroup runs cmd in a process tree of its own (proctree: a session and process group on Unix,
// a job object on Windows) and hands every line of its combined standard output and error to
// line, in order, from one goroutine. When ctx ends, the whole tree is asked to stop (SIGTERM;
// Windows kills it at once), then killed after killGrace; when the leader exits, whatever it left
// behind in the tree is killed too. It returns cmd.Wait's error (an *exec.ExitError for a non-zero
// exit) or the start error. start, if not nil, starts the tree through it (sandbox.Step.Start).
func runGroup(ctx context.Context, cmd *exec.Cmd, start func(func() error) error, line func(string)) error {
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	// A session of its own: a new process group, and no controlling terminal, so that the
	// customer's code cannot push keystrokes into the terminal of whoever started kiln (TIOCSTI).
	// A sandbox's init (bwrap) stays in the group, so killing the group ends the whole sandbox.
	// No Pdeathsig: it is tied to the OS thread that started the process, which Go may retire,
	// killing a build at random. If kiln dies, its next start stops what it left running
	// (runner.Runner.KillOrphans); on Windows the job object dies with kiln and takes the build.
	tree := proctree.New(cmd, proctree.Options{Session: true})
	if start == nil {
		start = func(f func() error) error { return f() }
	}
	err = start(tree.Start)
	for _, f := range cmd.ExtraFiles { // the child has its own copies now
		f.Close()
	}
	if err != nil {
		pr.Close()
		pw.Close()
		return err
	}
	defer tree.Close()
	pw.Close()

	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		readLines(pr, line)
	}()

	exited := make(chan struct{})
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		select {
		case <-ctx.Done():
			_ = tree.Stop()
			select {
			case <-exited:
			case <-time.After(killGrace):
			}
			_ = tree.Kill()
		case <-exited:
		}
	}()

	err = cmd.Wait()
	close(exited)
	<-killed
	// Leftovers of a finished build (workers the engine started) die with it.
	_ = tree.Kill()

	select {
	case <-readDone:
	case <-time.After(drainWait):
		pr.Close() // unblocks the reader
		<-readDone
	}
	pr.Close()
	return err
}

// readLines calls line for each line read from r until EOF or a read error. Lines longer than
// maxLineBytes are cut; carriage returns at their end are dropped; invalid UTF-8 is replaced.
func readLines(r io.Reader, line func(string)) {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	cut := false
	emit := func() {
		s := strings.TrimRight(string(buf), "\r")
		if !utf8.ValidString(s) {
			s = strings.ToValidUTF8(s, "\uFFFD")
		}
		if cut {
			s += " [line cut]"
		}
		line(s)
		buf, cut = buf[:0], false
	}
	for {
		part, isPrefix, err := br.ReadLine()
		if len(part) > 0 {
			if room := maxLineBytes - len(buf); len(part) > room {
				part, cut = part[:max(room, 0)], true
			}
			buf = append(buf, part...)
		}
		if err != nil {
			if len(buf) > 0 || cut {
				emit()
			}
			return
		}
		if !isPrefix {
			emit()
		}
	}
}

// exitCode returns the exit code of a process that ran to its end, or -1 with the signal that
// killed it.
func exitCode(err error) (code int, signal string, ok bool) {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return 0, "", false
	}
	if ws, isWS := ee.Sys().(syscall.WaitStatus); isWS && ws.Signaled() {
		return -1, ws.Signal().String(), true
	}
	return ee.ExitCode(), "", true
}
