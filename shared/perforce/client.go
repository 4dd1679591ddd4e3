// Package perforce runs the p4 command-line client against customer Perforce servers: strict
// serverUrl parsing, the host resolved and checked in Go (Resolve), and every p4 call made with
// the literal address, the ticket only in P4PASSWD, an environment confined to a private
// directory, a timeout and the whole process tree (group, or job object on Windows) killed at the deadline.
package perforce

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kilnbuild/kiln/shared/proctree"
)

// DefaultTimeout bounds a p4 call when Client.Timeout is zero.
const DefaultTimeout = 60 * time.Second

const (
	maxJSONOutput = 8 << 20
	maxStderr     = 64 << 10
)

// Client runs p4 for one server and user. Its fields are set by the caller; a Client is safe for
// concurrent use as long as they are not changed.
type Client struct {
	// P4 is the p4 binary ($KILN_P4); empty means "p4" from PATH.
	P4 string
	// Server is the parsed serverUrl.
	Server ServerURL
	// Address is the literal ip:port the caller resolved and checked (Resolve); p4 is given
	// <transport>:<Address> and never the host name.
	Address string
	User    string
	// Ticket goes to p4 only in P4PASSWD: never in argv, errors or logs.
	Ticket string
	// Password, when set, is the user's password: it goes to p4 only on the stdin of
	// `p4 login -a -p` (Login), never in argv, the environment, errors or logs. With it, a call
	// that p4 answers with an expired session logs in again and is made once more.
	Password string
	// Renewed, when set, is told of each ticket a login got, for the caller to keep.
	Renewed func(ticket string, expires time.Time)
	// Dir is a private directory (mode 0700, absolute) holding p4's tickets, trust and enviro
	// files; it is also p4's HOME and working directory.
	Dir string
	// Fingerprint is the SSL fingerprint recorded on first contact; when set, Trust refuses a
	// server that presents another one.
	Fingerprint string
	// Timeout bounds each p4 call but sync; zero means DefaultTimeout.
	Timeout time.Duration
	// SyncTimeout bounds a sync; zero means DefaultSyncTimeout.
	SyncTimeout time.Duration

	// testEnv is added to p4's environment by this package's tests only (the fake p4's state
	// and log files).
	testEnv []string
}

// ticketMu guards every Client's Ticket once a login may replace it (a Client is copied by
// value, so it holds no lock of its own).
var ticketMu sync.Mutex

// port returns the -p value: the transport and the literal address, with the address family
// spelled out (ssl4:1.2.3.4:1666, tcp6:[::1]:1666) so that p4 does no lookup of its own.
func (c *Client) port() (string, error) {
	ap, err := netip.ParseAddrPort(c.Address)
	if err != nil || ap.Addr().Zone() != "" || ap.Port() == 0 {
		return "", fmt.Errorf("perforce: Address %q is not a literal ip:port", c.Address)
	}
	transport, ok := protocols[c.Server.Protocol]
	if !ok {
		return "", fmt.Errorf("perforce: unknown protocol %q", c.Server.Protocol)
	}
	a := ap.Addr().Unmap()
	if a.Is4() {
		return transport + "4:" + netip.AddrPortFrom(a, ap.Port()).String(), nil
	}
	return transport + "6:" + ap.String(), nil
}

func (c *Client) check() error {
	if !filepath.IsAbs(c.Dir) {
		return errors.New("perforce: Dir must be an absolute path")
	}
	if fi, err := os.Stat(c.Dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("perforce: Dir %q is not a directory", c.Dir)
	}
	if c.User == "" || strings.HasPrefix(c.User, "-") || strings.ContainsFunc(c.User, isControlOrSpace) {
		return errors.New("perforce: invalid user name")
	}
	if strings.ContainsFunc(c.ticket(), func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return errors.New("perforce: invalid ticket")
	}
	return nil
}

func isControlOrSpace(r rune) bool { return r <= ' ' || r == 0x7f }

// noLocalPath is P4CLIENTPATH for calls that have no business writing local files (info,
// login -s, streams, files, describe...): a path under a device file, where no directory can
// exist, so that p4 refuses every file a server asks it to write.
const noLocalPath = "/dev/null/kiln-no-local-files"

// env is the whole environment of a p4 call. clientPath is P4CLIENTPATH: the only directory p4
// may write files in when the server asks it to (p4 refuses any other, its tickets and trust
// files among them); empty means none.
func (c *Client) env(clientPath string, noTicket bool) []string {
	if clientPath == "" {
		clientPath = noLocalPath
	}
	ticket := c.ticket()
	if noTicket {
		ticket = ""
	}
	return append([]string{
		"PATH=" + os.Getenv("PATH"),
		"P4PASSWD=" + ticket,
		"P4CONFIG=" + filepath.Join(c.Dir, "noconfig"),
		"P4ENVIRO=" + filepath.Join(c.Dir, "enviro"),
		"P4TICKETS=" + filepath.Join(c.Dir, "tickets"),
		"P4TRUST=" + filepath.Join(c.Dir, "trust"),
		"P4CLIENTPATH=" + clientPath,
		"HOME=" + c.Dir,
	}, c.testEnv...)
}

// run runs p4 -ztag -Mj and returns its records. p4's messages come as JSON objects too: errors
// among them (and warnings kiln knows, such as "no such file(s).") fail the call, whatever p4's
// exit code.
func (c *Client) run(ctx context.Context, args ...string) ([]map[string]string, error) {
	recs, err := c.runOnce(ctx, args...)
	if c.renewAfter(ctx, err) {
		return c.runOnce(ctx, args...)
	}
	return recs, err
}

func (c *Client) runOnce(ctx context.Context, args ...string) ([]map[string]string, error) {
	stdout := &capped{limit: maxJSONOutput}
	res, err := c.start(ctx, c.Timeout, callOptions{json: true, stdout: stdout, stdoutCap: stdout}, args...)
	if err != nil {
		return nil, err
	}
	recs, msgs, parseErr := parseJSONLines(stdout.buf.Bytes())
	if err := c.failure(commandName(args), withMessages(res, msgs)); err != nil {
		return nil, err
	}
	if parseErr != nil {
		return nil, &Error{Command: commandName(args), Message: parseErr.Error()}
	}
	return recs, nil
}

// withMessages adds p4's messages to how it ended: warnings and errors join the text failures
// are classified on, and an error fails the call even when p4 exits 0.
func withMessages(res result, msgs []message) result {
	var text strings.Builder
	for _, m := range msgs {
		if m.Severity >= severityWarn {
			text.WriteString(m.Text + "\n")
		}
		res.failed = res.failed || m.Severity >= severityFailed
	}
	text.WriteString(res.stderr)
	res.stderr = text.String()
	return res
}

// exec runs p4 with args (plain output) and returns its stdout, at most limit bytes (more is
// ErrTooLarge).
func (c *Client) exec(ctx context.Context, limit int, args ...string) ([]byte, error) {
	stdout := &capped{limit: limit}
	err := c.call(ctx, c.Timeout, callOptions{stdout: stdout, stdoutCap: stdout}, args...)
	if err != nil {
		return nil, err
	}
	return stdout.buf.Bytes(), nil
}

// callOptions are the parts of a p4 call besides its arguments.
type callOptions struct {
	json      bool // -ztag -Mj
	stdin     io.Reader
	stdout    io.Writer
	stdoutCap *capped // when stdout is one: its overflow ends the call with ErrTooLarge
	// clientPath is the directory p4 may write files in (P4CLIENTPATH); empty allows none.
	clientPath string
	// noTicket leaves P4PASSWD empty (a login, which reads the password on stdin).
	noTicket bool
}

// result is how a p4 process ended: its exit error (nil or *exec.ExitError), its stderr, and
// whether p4 reported a failure in its output.
type result struct {
	exitErr error
	stderr  string
	failed  bool
}

// call runs one p4 command with plain output and classifies its failure.
func (c *Client) call(ctx context.Context, timeout time.Duration, o callOptions, args ...string) error {
	err := c.callOnce(ctx, timeout, o, args...)
	if !c.renewAfter(ctx, err) {
		return err
	}
	// Once more, from the start of what it reads and with nothing of what it wrote.
	if o.stdin != nil {
		s, ok := o.stdin.(io.Seeker)
		if !ok {
			return err
		}
		if _, serr := s.Seek(0, io.SeekStart); serr != nil {
			return err
		}
	}
	if o.stdoutCap != nil {
		o.stdoutCap.buf.Reset()
	}
	return c.callOnce(ctx, timeout, o, args...)
}

func (c *Client) callOnce(ctx context.Context, timeout time.Duration, o callOptions, args ...string) error {
	res, err := c.start(ctx, timeout, o, args...)
	if err != nil {
		return err
	}
	return c.failure(commandName(args), res)
}

// commandName is p4's command in args, after a leading "-c <client>".
func commandName(args []string) string {
	if len(args) >= 2 && args[0] == "-c" {
		args = args[2:]
	}
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// start runs one p4 command: the checks, the confined environment, its own process group killed
// at the deadline (timeout, or DefaultTimeout when zero). Its error is for what ended the call
// before p4 could answer (bad arguments, timeout, output too large, p4 not started).
func (c *Client) start(ctx context.Context, timeout time.Duration, o callOptions, args ...string) (result, error) {
	cmdName := commandName(args)
	if cmdName == "" {
		return result{}, errors.New("perforce: no command")
	}
	if err := c.check(); err != nil {
		return result{}, err
	}
	p, err := c.port()
	if err != nil {
		return result{}, err
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	argv := []string{}
	if o.json {
		argv = append(argv, "-ztag", "-Mj")
	}
	argv = append(argv, "-p", p, "-u", c.User)
	argv = append(argv, args...)
	bin := c.P4
	if bin == "" {
		bin = "p4"
	}
	cmd := exec.CommandContext(ctx, bin, argv...)
	cmd.Env = c.env(o.clientPath, o.noTicket)
	cmd.Dir = c.Dir
	cmd.Stdin = o.stdin
	if o.stdoutCap != nil {
		o.stdoutCap.overflow = cancel
	}
	stderr := &capped{limit: maxStderr}
	cmd.Stdout, cmd.Stderr = o.stdout, stderr
	cmd.WaitDelay = 2 * time.Second

	// p4 and anything it starts are killed together when ctx ends.
	runErr := proctree.Run(cmd, proctree.Options{})
	switch {
	case o.stdoutCap != nil && o.stdoutCap.over:
		return result{}, &Error{Command: cmdName, Kind: ErrTooLarge}
	case ctx.Err() != nil && runErr != nil:
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return result{}, &Error{Command: cmdName, Kind: ErrTimeout}
		}
		return result{}, &Error{Command: cmdName, Message: "cancelled", Kind: ctx.Err()}
	}
	var ee *exec.ExitError
	if runErr != nil && !errors.As(runErr, &ee) {
		if errors.Is(runErr, exec.ErrNotFound) || errors.Is(runErr, fs.ErrPermission) || errors.Is(runErr, fs.ErrNotExist) {
			return result{}, fmt.Errorf("%w (%s: %v)", ErrNoClient, bin, runErr)
		}
		return result{}, fmt.Errorf("perforce: start p4: %w", runErr)
	}
	return result{exitErr: runErr, stderr: stderr.buf.String()}, nil
}

// failure classifies how p4 ended: nil when it succeeded, else an *Error with p4's first message
// (the ticket redacted) and its kind when kiln knows the text.
func (c *Client) failure(cmdName string, res result) error {
	if kind := classify(res.stderr); kind != nil {
		return &Error{Command: cmdName, Message: c.redact(res.stderr), Kind: kind}
	}
	if res.exitErr == nil && !res.failed {
		return nil
	}
	msg := c.redact(res.stderr)
	if msg == "" {
		var ee *exec.ExitError
		if errors.As(res.exitErr, &ee) {
			msg = fmt.Sprintf("exit code %d", ee.ExitCode())
		} else {
			msg = "failed"
		}
	}
	return &Error{Command: cmdName, Message: msg}
}

// capped keeps at most limit bytes; past it, it records the overflow, calls overflow (which ends
// the call early) and discards the rest.
type capped struct {
	buf      bytes.Buffer
	limit    int
	over     bool
	overflow func()
}

func (w *capped) Write(p []byte) (int, error) {
	if room := w.limit - w.buf.Len(); len(p) > room {
		if room > 0 {
			w.buf.Write(p[:room])
		}
		if !w.over {
			w.over = true
			if w.overflow != nil {
				w.overflow()
			}
		}
		return len(p), nil
	}
	return w.buf.Write(p)
}
