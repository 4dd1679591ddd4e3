package perforce

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeP4 is the test fixture testdata/fakep4, built once per test binary by TestMain.
var fakeP4 string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fakep4")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fakeP4 = filepath.Join(dir, "p4")
	build := exec.Command("go", "build", "-o", fakeP4, "../../testdata/fakep4")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build fakep4:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const (
	testTicket = "6F1C0C3E9B0D4A2F8E7D6C5B4A392817"
	testFP     = "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01"
)

// fakeState mirrors testdata/fakep4's state.
type fakeState struct {
	Port        string            `json:"port"`
	Unreachable bool              `json:"unreachable"`
	SSL         bool              `json:"ssl"`
	Fingerprint string            `json:"fingerprint"`
	Users       map[string]string `json:"users"`
	Expired     bool              `json:"expired"`
	// Passwords log users in (login -a -p); ExpiredTickets are refused as expired;
	// TicketLifetime is what login -s says is left (seconds); Logins counts the logins.
	Passwords      map[string]string `json:"passwords"`
	ExpiredTickets []string          `json:"expiredTickets"`
	TicketLifetime int               `json:"ticketLifetime"`
	Logins         int               `json:"logins"`
	Streams        []string          `json:"streams"`
	Files          map[string]string `json:"files"`
	Changes        []fakeChange      `json:"changes"`
	Hang           bool              `json:"hang"`
	ChildPIDFile   string            `json:"childPidFile"`
	// A hostile server: sync sends files under SyncRoot; every call asks to write
	// WriteOnEveryCall.
	SyncRoot         string `json:"syncRoot"`
	WriteOnEveryCall string `json:"writeOnEveryCall"`
}

type fakeChange struct {
	Change  int               `json:"change"`
	Path    string            `json:"path"`
	Desc    string            `json:"desc"`
	Pending bool              `json:"pending"`
	Files   map[string]string `json:"files"`
	Deleted []string          `json:"deleted"`
}

type fakeLog struct {
	Argv        []string          `json:"argv"`
	P4PasswdSet bool              `json:"p4passwdSet"`
	EnvNames    []string          `json:"envNames"`
	Env         map[string]string `json:"env"`
}

func defaultState() fakeState {
	return fakeState{
		Port:        "ssl4:127.0.0.1:1666",
		SSL:         true,
		Fingerprint: testFP,
		Users:       map[string]string{"builder": testTicket},
		Streams:     []string{"//game/main", "//game/dev"},
		Files: map[string]string{
			"//game/main/Shooter/Shooter.uproject":       `{"EngineAssociation": "5.3"}`,
			"//game/main/Shooter/Source/Shooter.cpp":     "int x;",
			"//game/main/Tools/Deep/Deeper/Too.uproject": "{}",
			"//game/main/A/B/C/D/TooDeep.uproject":       "{}",
			"//game/main/Root.uproject":                  "{}",
			"//game/main/Plugins/Foo/Foo.uproject":       "{}",
			"//game/dev/Big.bin":                         strings.Repeat("x", MaxPrint+1),
		},
		Changes: []fakeChange{
			{Change: 41, Path: "//game/main/Shooter/Source/Shooter.cpp", Desc: "older"},
			{Change: 42, Path: "//game/main/Shooter/Shooter.uproject", Desc: "Bump engine\n\n... status pending\nto 5.3"},
			{Change: 50, Path: "//game/dev/Big.bin", Desc: "dev only"},
		},
	}
}

// setup writes st, points the fake at it and returns a client for it and the log file.
func setup(t *testing.T, st fakeState) (*Client, string) {
	t.Helper()
	tmp := t.TempDir()
	b, _ := json.Marshal(st)
	statePath := filepath.Join(tmp, "state.json")
	if err := os.WriteFile(statePath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(tmp, "p4.log")
	dir := filepath.Join(tmp, "p4home")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	u, err := ParseServerURL("ssl:p4.example.com:1666")
	if err != nil {
		t.Fatal(err)
	}
	return &Client{P4: fakeP4, Server: u, Address: "127.0.0.1:1666", User: "builder", Ticket: testTicket,
		Dir: dir, Timeout: 10 * time.Second,
		testEnv: []string{"FAKEP4_STATE=" + statePath, "FAKEP4_LOG=" + logPath}}, logPath
}

func readLog(t *testing.T, path string) []fakeLog {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []fakeLog
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l fakeLog
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	return out
}

func TestCheckGoodCredentials(t *testing.T) {
	c, logPath := setup(t, defaultState())
	ctx := context.Background()
	fp, err := c.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fp != testFP {
		t.Fatalf("fingerprint %q, want %q", fp, testFP)
	}
	info, err := c.Info(ctx)
	if err != nil || info.UserName != "builder" || info.ServerAddress != "127.0.0.1:1666" {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	if err := c.LoginStatus(ctx); err != nil {
		t.Fatal(err)
	}

	logs := readLog(t, logPath)
	if len(logs) < 4 {
		t.Fatalf("%d calls logged", len(logs))
	}
	wantEnv := []string{"FAKEP4_LOG", "FAKEP4_STATE", "HOME", "P4CLIENTPATH", "P4CONFIG", "P4ENVIRO", "P4PASSWD", "P4TICKETS", "P4TRUST", "PATH"}
	for _, l := range logs {
		line := strings.Join(l.Argv, " ")
		if strings.Contains(line, testTicket) {
			t.Errorf("ticket in argv: %q", line)
		}
		if !l.P4PasswdSet {
			t.Errorf("P4PASSWD not set for %q", line)
		}
		if !slices.Equal(l.EnvNames, wantEnv) {
			t.Errorf("env names %v, want %v", l.EnvNames, wantEnv)
		}
		// A check may write no local file: P4CLIENTPATH names a directory that cannot exist.
		if got := l.Env["P4CLIENTPATH"]; got != noLocalPath {
			t.Errorf("P4CLIENTPATH=%q for %q, want %q", got, line, noLocalPath)
		}
		for k, v := range l.Env {
			if k == "P4CLIENTPATH" {
				continue
			}
			if v != c.Dir && !strings.HasPrefix(v, c.Dir+string(filepath.Separator)) {
				t.Errorf("%s=%q is not under Dir %q", k, v, c.Dir)
			}
		}
		if !slices.Equal(l.Argv[:5], []string{"-p", "ssl4:127.0.0.1:1666", "-u", "builder", l.Argv[4]}) &&
			!slices.Equal(l.Argv[:6], []string{"-ztag", "-Mj", "-p", "ssl4:127.0.0.1:1666", "-u", "builder"}) {
			t.Errorf("argv %q does not start with the global options", line)
		}
	}
	if got := logs[0].Argv; !slices.Equal(got, []string{"-p", "ssl4:127.0.0.1:1666", "-u", "builder", "trust", "-y"}) {
		t.Errorf("first call %q, want trust -y", got)
	}
}

func TestAuthErrors(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*fakeState, *Client)
		check func(*Client, context.Context) error
	}{
		{"wrong ticket", func(_ *fakeState, c *Client) { c.Ticket = "WRONG" + testTicket }, (*Client).LoginStatus},
		{"no ticket", func(_ *fakeState, c *Client) { c.Ticket = "" }, (*Client).LoginStatus},
		{"unknown user", func(_ *fakeState, c *Client) { c.User = "nobody" }, (*Client).LoginStatus},
		{"expired", func(s *fakeState, _ *Client) { s.Expired = true }, (*Client).LoginStatus},
		{"check", func(_ *fakeState, c *Client) { c.Ticket = "WRONG" }, func(c *Client, ctx context.Context) error {
			_, err := c.Check(ctx)
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := defaultState()
			c, _ := setup(t, st)
			tc.edit(&st, c)
			b, _ := json.Marshal(st)
			os.WriteFile(strings.TrimPrefix(c.testEnv[0], "FAKEP4_STATE="), b, 0o600)
			if _, err := c.Trust(context.Background()); err != nil {
				t.Fatal(err)
			}
			err := tc.check(c, context.Background())
			if !errors.Is(err, ErrAuth) {
				t.Fatalf("err = %v, want ErrAuth", err)
			}
			if strings.Contains(err.Error(), testTicket) {
				t.Fatalf("ticket in error %q", err)
			}
		})
	}
}

func TestUnreachable(t *testing.T) {
	st := defaultState()
	st.Unreachable = true
	c, _ := setup(t, st)
	_, err := c.Check(context.Background())
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	// Another address than the server's is unreachable too.
	c2, _ := setup(t, defaultState())
	c2.Address = "127.0.0.2:1666"
	if _, err := c2.Info(context.Background()); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
}

func TestTrust(t *testing.T) {
	ctx := context.Background()
	c, _ := setup(t, defaultState())
	// Untrusted SSL server: commands fail until trust -y.
	if _, err := c.Info(ctx); !errors.Is(err, ErrTrust) {
		t.Fatalf("Info before trust: %v, want ErrTrust", err)
	}
	c.Fingerprint = testFP
	if fp, err := c.Trust(ctx); err != nil || fp != testFP {
		t.Fatalf("Trust = %q, %v", fp, err)
	}
	// Trusting again is fine.
	if fp, err := c.Trust(ctx); err != nil || fp != testFP {
		t.Fatalf("Trust again = %q, %v", fp, err)
	}
	// The recorded fingerprint differs from the server's: refused.
	c2, _ := setup(t, defaultState())
	c2.Fingerprint = strings.Replace(testFP, "AB", "00", 1)
	if _, err := c2.Trust(ctx); !errors.Is(err, ErrTrust) {
		t.Fatalf("changed fingerprint: %v, want ErrTrust", err)
	}
	// tcp: no trust step.
	c3, logPath := setup(t, fakeState{Port: "tcp4:127.0.0.1:1666", Users: map[string]string{"builder": testTicket}})
	c3.Server, _ = ParseServerURL("tcp:p4.example.com:1666")
	if fp, err := c3.Check(ctx); err != nil || fp != "" {
		t.Fatalf("tcp Check = %q, %v", fp, err)
	}
	for _, l := range readLog(t, logPath) {
		if slices.Contains(l.Argv, "trust") {
			t.Errorf("trust called over tcp: %q", l.Argv)
		}
	}
}

func TestDepotOperations(t *testing.T) {
	ctx := context.Background()
	c, _ := setup(t, defaultState())
	if _, err := c.Trust(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.StreamExists(ctx, "//game/main"); err != nil || !ok {
		t.Errorf("StreamExists main = %v, %v", ok, err)
	}
	if ok, err := c.StreamExists(ctx, "//game/nope"); err != nil || ok {
		t.Errorf("StreamExists nope = %v, %v", ok, err)
	}
	ups, err := c.FindUprojects(ctx, "//game/main")
	// Up to depth 3, as on GitHub: a/b/c/Game.uproject is found, a/b/c/d/Game.uproject is not.
	want := []string{"//game/main/Plugins/Foo/Foo.uproject", "//game/main/Root.uproject", "//game/main/Shooter/Shooter.uproject", "//game/main/Tools/Deep/Deeper/Too.uproject"}
	if err != nil || !slices.Equal(ups, want) {
		t.Errorf("FindUprojects = %q, %v; want %q", ups, err, want)
	}
	if fs, err := c.Files(ctx, "//game/none/..."); err != nil || fs != nil {
		t.Errorf("Files none = %q, %v", fs, err)
	}
	dirs, err := c.Dirs(ctx, "//game/main/*")
	if err != nil || !slices.Equal(dirs, []string{"//game/main/A", "//game/main/Plugins", "//game/main/Shooter", "//game/main/Tools"}) {
		t.Errorf("Dirs = %q, %v", dirs, err)
	}
	b, err := c.Print(ctx, "//game/main/Shooter/Shooter.uproject")
	if err != nil || string(b) != `{"EngineAssociation": "5.3"}` {
		t.Errorf("Print = %q, %v", b, err)
	}
	if _, err := c.Print(ctx, "//game/main/Nope.uproject"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Print missing: %v, want ErrNotFound", err)
	}
	if _, err := c.Print(ctx, "//game/dev/Big.bin"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Print big: %v, want ErrTooLarge", err)
	}
	// A real server ends the description with a newline and prints the status after it; a
	// description line that looks like a field is still the description's.
	if d, err := c.Describe(ctx, "42"); err != nil || d != (Change{Number: "42", Description: "Bump engine\n\n... status pending\nto 5.3", Status: "submitted"}) {
		t.Errorf("Describe = %q, %v", d, err)
	}
	if _, err := c.Describe(ctx, "99"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Describe unknown: %v, want ErrNotFound", err)
	}
}

func TestArgumentsRefusedBeforeRunning(t *testing.T) {
	ctx := context.Background()
	c, logPath := setup(t, defaultState())
	calls := []func() error{
		func() error { _, err := c.StreamExists(ctx, "-x"); return err },
		func() error { _, err := c.StreamExists(ctx, "//game/main\n"); return err },
		func() error { _, err := c.Files(ctx, "--help"); return err },
		func() error { _, err := c.Print(ctx, "//game/..."); return err },
		func() error { _, err := c.Describe(ctx, "-s"); return err },
		func() error {
			_, err := c.LatestChangeIn(ctx, Workspace{Name: "-x", Root: "/tmp/ws", Stream: "//game/main"})
			return err
		},
		func() error { c2 := *c; c2.Address = "p4.example.com:1666"; return c2.LoginStatus(ctx) },
		func() error { c2 := *c; c2.User = "-u"; return c2.LoginStatus(ctx) },
		func() error { c2 := *c; c2.Dir = "relative"; return c2.LoginStatus(ctx) },
	}
	for i, call := range calls {
		if err := call(); err == nil {
			t.Errorf("call %d: no error", i)
		}
	}
	if _, err := os.Stat(logPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("p4 was run: %v", err)
	}
}

func TestTimeoutKillsProcessGroup(t *testing.T) {
	st := defaultState()
	st.Hang = true
	st.ChildPIDFile = filepath.Join(t.TempDir(), "child.pid")
	c, _ := setup(t, st)
	c.Timeout = 500 * time.Millisecond
	start := time.Now()
	err := c.LoginStatus(context.Background())
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
	b, err := os.ReadFile(st.ChildPIDFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	deadline := time.Now().Add(5 * time.Second)
	for !gone(pid) {
		if time.Now().After(deadline) {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
			t.Fatalf("child sleep %d still running after the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// gone reports whether pid no longer runs (absent, or a zombie nobody reaped yet).
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z' || s[i+2] == 'X'
}
