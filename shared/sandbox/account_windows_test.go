//go:build windows

package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// testAccount is the build account the test makes, and deletes.
const testAccount = "kiln-build-test"

// probeEnv makes the test binary, started as the build account, the probe of
// TestAccountBuildCannotReachTheAgent instead of a test run.
const probeEnv = "SANDBOX_ACCOUNT_PROBE"

// TestAccountProbe is the build's side: it reports what it could reach, one line each.
func TestAccountProbe(t *testing.T) {
	if os.Getenv(probeEnv) != "1" {
		t.Skip("only run as the build account by TestAccountBuildCannotReachTheAgent")
	}
	pid, _ := strconv.Atoi(os.Getenv("PROBE_AGENT_PID"))
	report := func(what string, err error) {
		if err != nil {
			fmt.Printf("%s: denied: %v\n", what, err)
		} else {
			fmt.Printf("%s: ok\n", what)
		}
	}
	h, err := windows.OpenProcess(windows.PROCESS_VM_READ|windows.PROCESS_QUERY_INFORMATION, false, uint32(pid))
	if err == nil {
		windows.CloseHandle(h)
	}
	report("open-agent", err)
	h, err = windows.OpenProcess(windows.PROCESS_VM_READ|windows.PROCESS_QUERY_INFORMATION, false, uint32(os.Getpid()))
	if err == nil {
		windows.CloseHandle(h)
	}
	report("open-self", err)
	_, err = os.ReadFile(os.Getenv("PROBE_SECRET"))
	report("read-secret", err)
	_, err = os.ReadFile(os.Getenv("PROBE_PUBLIC"))
	report("read-public", err)
	own := filepath.Join(os.Getenv("PROBE_WORKSPACE"), "own.txt")
	err = os.WriteFile(own, []byte("mine"), 0o644)
	if err == nil {
		_, err = os.ReadFile(own)
	}
	report("own-workspace", err)
	report("write-protected", os.WriteFile(os.Getenv("PROBE_PROTECTED"), []byte("hook"), 0o644))
	var kiln []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(strings.ToUpper(kv), "KILN_") {
			name, _, _ := strings.Cut(kv, "=")
			kiln = append(kiln, name)
		}
	}
	fmt.Printf("kiln-env: %q\n", kiln)
}

// TestAccountBuildCannotReachTheAgent: a step run by the account confiner cannot open the agent's
// process for reading nor read a file only the agent may read (its token file), gets no KILN_
// variable, cannot write a protected path, and can work in its own workspace (the control). It
// needs the agent's rights: run it from a LocalSystem shell (psexec -s).
func TestAccountBuildCannotReachTheAgent(t *testing.T) {
	if os.Getenv(probeEnv) == "1" {
		t.Skip("the probe itself")
	}
	if err := enablePrivileges("SeAssignPrimaryTokenPrivilege", "SeIncreaseQuotaPrivilege"); err != nil {
		t.Skipf("needs LocalSystem (psexec -s): %v", err)
	}
	self, err := currentUser()
	if err != nil {
		t.Fatal(err)
	}
	// A directory Users may read, as C:\kiln would be: the token file in it is out of the
	// build's reach by its own ACL only; a file beside it (the control) is not.
	base := t.TempDir()
	if err := setSDDL(base, "D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;FA;;;"+self.String()+")(A;OICI;0x1200a9;;;BU)"); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(base, "work")
	ws := filepath.Join(work, "ws")
	tools := filepath.Join(base, "tools")
	for _, d := range []string{filepath.Join(ws, ".git"), filepath.Join(ws, "tmp"), tools} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(base, "agent.token")
	if err := os.WriteFile(secret, []byte("kagent_probe\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := makePrivate(secret, self); err != nil {
		t.Fatal(err)
	}
	public := filepath.Join(base, "public.txt")
	if err := os.WriteFile(public, []byte("public\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(tools, "probe.exe")
	copyExe(t, os.Args[0], exe)
	t.Setenv("KILN_AGENT_TOKEN", "kagent_probe_env")

	c, err := OpenAccount(context.Background(), Account{Name: testAccount, Private: []string{work}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.(*accountConfiner).Close()
	t.Cleanup(func() { // after Close: the test's account goes (its profile folder stays)
		n, _ := windows.UTF16PtrFromString(testAccount)
		if r, _, _ := windows.NewLazySystemDLL("netapi32.dll").NewProc("NetUserDel").Call(0, uintptr(unsafePointer(n))); r != 0 {
			t.Logf("NetUserDel %s: %d", testAccount, r)
		}
	})
	j := Jail{
		ReadOnly: []string{tools}, Writable: []string{ws}, Protected: []string{filepath.Join(ws, ".git")},
		Dir: ws, Home: ws, Tmp: filepath.Join(ws, "tmp"),
		Env: []string{probeEnv + "=1", "PROBE_AGENT_PID=" + strconv.Itoa(os.Getpid()), "PROBE_SECRET=" + secret, "PROBE_PUBLIC=" + public,
			"PROBE_WORKSPACE=" + ws, "PROBE_PROTECTED=" + filepath.Join(ws, ".git", "config")},
	}
	step, err := c.Prepare(j, exe, "-test.run=^TestAccountProbe$", "-test.v")
	if err != nil {
		t.Fatal(err)
	}
	defer step.Done()
	var out bytes.Buffer
	step.Cmd.Stdout, step.Cmd.Stderr = &out, &out
	if err := step.Start(step.Cmd.Start); err != nil {
		t.Fatal(err)
	}
	if err := step.Cmd.Wait(); err != nil {
		t.Fatalf("probe: %v\n%s", err, out.String())
	}
	step.Done()
	got := out.String()
	for _, want := range []string{"open-agent: denied", "open-self: ok", "read-secret: denied", "read-public: ok",
		"own-workspace: ok", "write-protected: denied", "kiln-env: []"} {
		if !strings.Contains(got, want) {
			t.Errorf("the build's report does not say %q:\n%s", want, got)
		}
	}
	// Once the step is done no process of the build account is left.
	if pids, err := accountProcesses(c.(*accountConfiner).sid); err != nil || len(pids) > 0 {
		t.Errorf("processes of the build account left after Done: %v %v", pids, err)
	}
}

func setSDDL(path, sddl string) error {
	sd, err := windows.SecurityDescriptorFromString(sddl)
	if err != nil {
		return err
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return err
	}
	return windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil)
}

func copyExe(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
