package perforce

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// DefaultSyncTimeout bounds a sync when Client.SyncTimeout is zero: a first sync of a large
// stream moves many gigabytes.
const DefaultSyncTimeout = 6 * time.Hour

// Workspace is a client workspace kiln builds in: one per (project, stream), reused so that each
// sync transfers only what changed since the last one.
type Workspace struct {
	// Name is the client's name on the server.
	Name string
	// Root is the absolute local directory the client syncs into.
	Root string
	// Stream is the stream the client views (//depot/stream); the server makes the view.
	Stream string
	// Classic, for a classic depot path: Stream is then a depot directory (//depot/Game) that
	// the client's own view maps, //depot/Game/... //<name>/... .
	Classic bool
}

var workspaceNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._-]{0,127}$`)

func (ws Workspace) check() error {
	if !workspaceNameRE.MatchString(ws.Name) || strings.Contains(ws.Name, "...") {
		return fmt.Errorf("perforce: invalid workspace name %q", ws.Name)
	}
	if !filepath.IsAbs(ws.Root) || strings.ContainsFunc(ws.Root, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return fmt.Errorf("perforce: workspace root %q must be an absolute path on one line", ws.Root)
	}
	if err := checkStream(ws.Stream); err != nil {
		return err
	}
	return nil
}

// checkStream refuses anything but a plain stream path: no wildcards or revision specifiers.
func checkStream(stream string) error {
	if err := checkPath(stream); err != nil {
		return err
	}
	if strings.ContainsAny(stream, "*@#% ") || strings.Contains(stream, "...") || strings.HasSuffix(stream, "/") {
		return fmt.Errorf("perforce: invalid stream %q", stream)
	}
	return nil
}

// SaveWorkspace creates the client workspace, or updates it, with p4 client -i: owned by the
// user, bound to no host, its view made by the server from the stream, and options for builds
// (all files writable, writable files overwritten, empty directories removed, files dated when
// synced so that incremental compiles see what changed).
func (c *Client) SaveWorkspace(ctx context.Context, ws Workspace) error {
	if err := ws.check(); err != nil {
		return err
	}
	source := "Stream:\t" + ws.Stream + "\n"
	if ws.Classic {
		source = "View:\n\t" + ws.Stream + "/... " + ws.view() + "\n"
	}
	spec := fmt.Sprintf("Client:\t%s\n\nOwner:\t%s\n\nRoot:\t%s\n\n"+
		"Options:\tallwrite clobber nocompress unlocked nomodtime rmdir\n\n"+
		"SubmitOptions:\tsubmitunchanged\n\nLineEnd:\tlocal\n\n%s\n"+
		"Description:\n\tkiln build workspace; kiln syncs it before each build.\n",
		ws.Name, c.User, ws.Root, source)
	out := &capped{limit: 64 << 10}
	return c.call(ctx, c.Timeout, callOptions{stdin: strings.NewReader(spec), stdout: out, stdoutCap: out,
		clientPath: ws.Root}, "client", "-i")
}

// view is the whole of the workspace's view in client syntax (//<name>/...): the stream's own
// files and whatever its spec imports (an engine from another depot, say).
func (ws Workspace) view() string { return "//" + ws.Name + "/..." }

// LatestChangeIn returns the newest submitted changelist that touches the workspace's view
// (p4 -c <name> changes -m1 -s submitted //<name>/...), imported paths included; ErrNotFound
// when there is none.
func (c *Client) LatestChangeIn(ctx context.Context, ws Workspace) (string, error) {
	if err := ws.check(); err != nil {
		return "", err
	}
	recs, err := c.run(ctx, "-c", ws.Name, "changes", "-m1", "-s", "submitted", ws.view())
	if err != nil {
		return "", err
	}
	if len(recs) == 0 || !IsChange(recs[0]["change"]) {
		return "", &Error{Command: "changes", Message: "no submitted change in " + ws.Stream, Kind: ErrNotFound}
	}
	return recs[0]["change"], nil
}

// Sync brings the workspace to its view at change (p4 -c <name> sync //<name>/...@<change>),
// transferring only the files whose revision differs from what the server records the workspace
// to have. With force (sync -f) every file is transferred again, whatever the server records: for
// a root that lost its files. p4's line for each file added, updated or deleted is passed to
// onFile (nil ignores them); Sync returns how many there were. It is bounded by SyncTimeout, not
// Timeout.
func (c *Client) Sync(ctx context.Context, ws Workspace, change string, force bool, onFile func(line string)) (int, error) {
	if err := ws.check(); err != nil {
		return 0, err
	}
	if !IsChange(change) {
		return 0, fmt.Errorf("perforce: invalid change %q", change)
	}
	lines := &lineWriter{onLine: onFile}
	timeout := c.SyncTimeout
	if timeout <= 0 {
		timeout = DefaultSyncTimeout
	}
	args := []string{"-c", ws.Name, "sync"}
	if force {
		args = append(args, "-f")
	}
	err := c.call(ctx, timeout, callOptions{stdout: lines, clientPath: ws.Root}, append(args, ws.view()+"@"+change)...)
	lines.finish()
	var pe *Error
	if errors.As(err, &pe) && pe.Kind == nil && strings.HasSuffix(pe.Message, "file(s) up-to-date.") {
		err = nil // a warning, not a failure, whatever exit code the client gives it
	}
	return lines.count, err
}

// Change is a changelist as p4 describe reports it.
type Change struct {
	Number      string
	Description string
	// Status is "submitted", "pending" or "shelved".
	Status string
}

// Describe returns a changelist (p4 describe -s); ErrNotFound when the server has none by that
// number.
func (c *Client) Describe(ctx context.Context, change string) (Change, error) {
	if !IsChange(change) {
		return Change{}, fmt.Errorf("perforce: invalid change %q", change)
	}
	recs, err := c.run(ctx, "describe", "-s", change)
	if err != nil {
		return Change{}, err
	}
	if len(recs) == 0 {
		return Change{}, &Error{Command: "describe", Message: "change " + change, Kind: ErrNotFound}
	}
	r := recs[0]
	// The description ends with its own newline, as p4 stores it; kiln shows it without.
	return Change{Number: change, Description: strings.TrimSpace(r["desc"]), Status: r["status"]}, nil
}

// maxSyncLine caps a line of sync output kept for onFile; the rest of a longer line is dropped.
const maxSyncLine = 4 << 10

// lineWriter splits a stream into lines and passes each to onLine.
type lineWriter struct {
	onLine  func(string)
	partial []byte
	count   int
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			room := maxSyncLine - len(w.partial)
			w.partial = append(w.partial, p[:max(0, min(room, len(p)))]...)
			break
		}
		room := maxSyncLine - len(w.partial)
		w.partial = append(w.partial, p[:max(0, min(room, i))]...)
		w.emit()
		p = p[i+1:]
	}
	return n, nil
}

func (w *lineWriter) emit() {
	line := strings.TrimRight(string(w.partial), "\r")
	w.partial = w.partial[:0]
	if line == "" {
		return
	}
	w.count++
	if w.onLine != nil {
		w.onLine(line)
	}
}

func (w *lineWriter) finish() {
	if len(w.partial) > 0 {
		w.emit()
	}
}
