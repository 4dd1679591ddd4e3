// Package lifeline ends the processes kiln aws-local started when kiln aws-local ends, however
// it ends: a stop, a crash, or SIGKILL, which no handler of its own can catch.
//
// A Lifeline is a watchdog process (a small sh script, in a session of its own, deaf to terminal
// signals) holding the read end of a pipe whose only write end is kiln aws-local's. The kernel
// closes that end when kiln aws-local exits for any reason; the watchdog then reads EOF and kills
// (SIGKILL) every process group it was told about, and every process whose environment carries
// the lifeline's marker: the children are marked before they start, and what they start inherits
// the marker, also in sessions and groups of their own (a build host's builds).
//
// Pdeathsig would not do: it is tied to the OS thread that forked the child, which the Go runtime
// may retire while the child runs, and it reaches only the child, not what the child started.
package lifeline

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
)

// MarkerVar is the environment variable that marks the processes of one lifeline.
const MarkerVar = "KILN_AWS_LOCAL_LIFELINE"

// watchdog is the watchdog's script: $1 is the marker ("NAME=value"); its standard input is the
// pipe. Lines "+PGID" and "-PGID" add and remove process groups; on EOF it kills what is left.
const watchdog = `trap '' HUP INT QUIT TERM PIPE
marker=$1
groups=' '
while IFS= read -r line; do
	case $line in
	+*) groups="$groups${line#+} " ;;
	-*) rest=' '
		for g in $groups; do [ "$g" = "${line#-}" ] || rest="$rest$g "; done
		groups=$rest ;;
	esac
done
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
for pass in 1 2 3 4 5; do
	pids=$(grep -lzxF -e "$marker" /proc/[0-9]*/environ 2>/dev/null | sed -n 's,^/proc/\([0-9]*\)/environ$,\1,p')
	[ -n "$pids" ] || exit 0
	kill -s KILL $pids 2>/dev/null
	sleep 0.1
done
`

// Lifeline is a running watchdog. A nil *Lifeline is valid and does nothing, for stand-ins
// started without one (their own tests).
type Lifeline struct {
	marker string
	mu     sync.Mutex
	pipe   *os.File // the write end; nil once closed
	cmd    *exec.Cmd
	done   chan struct{}
}

// Start starts the watchdog.
func Start() (*Lifeline, error) {
	raw := make([]byte, 12)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	r, w, err := os.Pipe() // both ends close-on-exec: no other child inherits the write end
	if err != nil {
		return nil, fmt.Errorf("lifeline: %w", err)
	}
	defer r.Close() // the watchdog has its own copy
	l := &Lifeline{marker: MarkerVar + "=" + hex.EncodeToString(raw), pipe: w, done: make(chan struct{})}
	l.cmd = exec.Command("/bin/sh", "-c", watchdog, "lifeline-watchdog", l.marker)
	l.cmd.Stdin = r
	l.cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"} // without the marker
	l.cmd.SysProcAttr = ownSession()
	if err := l.cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("lifeline: start the watchdog: %w", err)
	}
	go func() { _ = l.cmd.Wait(); close(l.done) }()
	return l, nil
}

// Marker is the environment entry (NAME=value) of the processes this lifeline ends.
func (l *Lifeline) Marker() string {
	if l == nil {
		return ""
	}
	return l.marker
}

// Mark adds the marker to cmd's environment; call it before cmd starts, after its Env is set
// (a nil Env is the current process's environment, as exec.Cmd takes it).
func (l *Lifeline) Mark(cmd *exec.Cmd) {
	if l == nil {
		return
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(append([]string{}, env...), l.marker)
}

// Hold tells the watchdog about the process group pgid (a child proctree started: its pid).
func (l *Lifeline) Hold(pgid int) error { return l.send("+", pgid) }

// Release tells the watchdog the group pgid ended: it is not killed on EOF (its id may be reused).
func (l *Lifeline) Release(pgid int) error { return l.send("-", pgid) }

func (l *Lifeline) send(op string, pgid int) error {
	if l == nil {
		return nil
	}
	if pgid <= 1 {
		return fmt.Errorf("lifeline: not a process group: %d", pgid)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pipe == nil {
		return errors.New("lifeline: closed")
	}
	if _, err := l.pipe.WriteString(op + strconv.Itoa(pgid) + "\n"); err != nil {
		return fmt.Errorf("lifeline: tell the watchdog: %w", err)
	}
	return nil
}

// Close closes the pipe, as an exit would: the watchdog ends whatever is left of the processes it
// guards, and Close waits for it.
func (l *Lifeline) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	if l.pipe != nil {
		l.pipe.Close()
		l.pipe = nil
	}
	l.mu.Unlock()
	<-l.done
	return nil
}
