package sandbox

import (
	"bytes"
	"crypto/rand"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCheckAccountName(t *testing.T) {
	for _, tc := range []struct {
		name    string
		wantErr string
	}{
		{name: "kiln-build"},
		{name: DefaultBuildAccount},
		{name: "build_01.studio"},
		{name: "", wantErr: "empty"},
		{name: "a-name-of-twenty-one1", wantErr: "20 characters"},
		{name: `studio\kiln`, wantErr: "cannot"},
		{name: "kiln@studio", wantErr: "cannot"},
		{name: "kiln build;", wantErr: "cannot"},
		{name: "kiln\tbuild", wantErr: "cannot"},
		{name: ". .", wantErr: "dots and spaces"},
		{name: "administrator", wantErr: "Windows' own"},
		{name: "SYSTEM", wantErr: "Windows' own"},
		{name: "Guest", wantErr: "Windows' own"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckAccountName(tc.name)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
			}
		})
	}
}

// TestNewPassword: a password is 32 characters of the classes, one of each at least, and two are
// never the same; a random source that fails or gives nothing usable is an error, not a weak
// password.
func TestNewPassword(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		pw, err := newPassword(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if len(pw) != passwordLen || !hasEveryClass(pw) {
			t.Fatalf("password %q: %d characters, every class %v", pw, len(pw), hasEveryClass(pw))
		}
		for _, c := range pw {
			if !strings.ContainsRune(strings.Join(passwordClasses, ""), c) {
				t.Fatalf("password %q holds %q, of no class", pw, c)
			}
		}
		if seen[pw] {
			t.Fatalf("password %q drawn twice", pw)
		}
		seen[pw] = true
	}
	if _, err := newPassword(bytes.NewReader(make([]byte, 10))); err == nil {
		t.Error("a random source that ran dry gave a password")
	}
	// Only the byte 0 forever: one character, never every class.
	if pw, err := newPassword(io.LimitReader(zeros{}, 1<<20)); err == nil {
		t.Errorf("a constant random source gave the password %q", pw)
	}
	// Only bytes above the last usable one: nothing is drawn, and the draw stops.
	if pw, err := newPassword(io.LimitReader(bytesOf(0xff), 1<<20)); err == nil {
		t.Errorf("an unusable random source gave the password %q", pw)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

type bytesOf byte

func (b bytesOf) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// TestAccountEnv: a Windows build's environment is the build account's own, its TEMP and TMP in
// the jail, the variables named to pass as the agent has them, and the jail's; never a KILN_
// variable in any case, and nothing else of the agent's.
func TestAccountEnv(t *testing.T) {
	account := []string{
		`USERPROFILE=C:\Users\kiln-build`, `Temp=C:\Users\kiln-build\AppData\Local\Temp`,
		`TMP=C:\Users\kiln-build\AppData\Local\Temp`, `Path=C:\Windows\system32`, `kiln_odd=1`,
	}
	agent := []string{
		"KILN_AGENT_TOKEN=kagent_secret", "Kiln_Agent_Token_File=C:\\kiln\\token", "P4PASSWD=p4secret",
		`JAVA_HOME=C:\jdk`, `USERPROFILE=C:\Windows\system32\config\systemprofile`, "ANDROID_HOME=C:\\sdk",
	}
	j := Jail{Tmp: `D:\work\scratch\tmp`, Env: []string{`uebp_LogFolder=D:\work\scratch\uat-logs`, "KILN_SNEAKY=1"}}
	got := accountEnv(account, agent, []string{"java_home", "KILN_AGENT_TOKEN"}, j)
	want := []string{
		`USERPROFILE=C:\Users\kiln-build`, `Path=C:\Windows\system32`,
		`TEMP=D:\work\scratch\tmp`, `TMP=D:\work\scratch\tmp`,
		`JAVA_HOME=C:\jdk`, `uebp_LogFolder=D:\work\scratch\uat-logs`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("environment\n got %q\nwant %q", got, want)
	}
	for _, kv := range got {
		if strings.Contains(strings.ToUpper(kv), "KILN_") || strings.Contains(kv, "secret") {
			t.Errorf("the build gets %q", kv)
		}
	}
}

// TestAccountGrants: the build account may modify the jail's writable directories, read and run
// the engine and the operator's extra directories, and write nothing of the protected paths.
func TestAccountGrants(t *testing.T) {
	j := Jail{
		ReadOnly:  []string{`D:\Unreal\5.4`},
		Writable:  []string{`D:\work\ws\game`, `D:\work\archive`},
		Protected: []string{`D:\work\ws\game\.git`},
	}
	got := accountGrants(j, []string{`C:\Android\sdk`})
	want := []grant{
		{Path: `D:\work\ws\game`, Access: accessModify},
		{Path: `D:\work\archive`, Access: accessModify},
		{Path: `C:\Android\sdk`, Access: accessReadExecute},
		{Path: `D:\Unreal\5.4`, Access: accessReadExecute},
		{Path: `D:\work\ws\game\.git`, Access: accessWriteAndDelete, Deny: true},
	}
	if !slices.Equal(got, want) {
		t.Errorf("grants\n got %+v\nwant %+v", got, want)
	}
	const (
		writeDAC    = 0x40000
		writeOwner  = 0x80000
		fileDelete  = 0x10000
		fileWrite   = 0x2
		deleteChild = 0x40
	)
	// Modify never lets the build change permissions, take ownership, or delete what a
	// protected path holds through its parent (FILE_DELETE_CHILD).
	if accessModify&(writeDAC|writeOwner|deleteChild) != 0 {
		t.Errorf("modify %#x holds WRITE_DAC, WRITE_OWNER or FILE_DELETE_CHILD", accessModify)
	}
	if accessReadExecute&(fileWrite|fileDelete|writeDAC) != 0 {
		t.Errorf("read & execute %#x lets the build write", accessReadExecute)
	}
	if accessWriteAndDelete&(fileWrite|fileDelete|writeDAC|writeOwner) != fileWrite|fileDelete|writeDAC|writeOwner {
		t.Errorf("a protected path's denial %#x lets the build write, delete or change its permissions", accessWriteAndDelete)
	}
}

func TestAgentOnlySDDL(t *testing.T) {
	for _, tc := range []struct{ self, want string }{
		{self: "S-1-5-18", want: "D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;RC;;;OW)"},
		{self: "S-1-5-21-1-2-3-1001", want: "D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;FA;;;S-1-5-21-1-2-3-1001)(A;OICI;RC;;;OW)"},
	} {
		if got := agentOnlySDDL(tc.self); got != tc.want {
			t.Errorf("agentOnlySDDL(%s) = %s, want %s", tc.self, got, tc.want)
		}
	}
}

// TestAccountRightsOnlyBatch: the build account may log on as a batch job and is denied every
// other logon.
func TestAccountRightsOnlyBatch(t *testing.T) {
	for _, r := range accountRights {
		if r != "SeBatchLogonRight" && !strings.HasPrefix(r, "SeDeny") {
			t.Errorf("the build account is granted %s", r)
		}
	}
	for _, deny := range []string{"SeDenyInteractiveLogonRight", "SeDenyRemoteInteractiveLogonRight", "SeDenyNetworkLogonRight"} {
		if !slices.Contains(accountRights, deny) {
			t.Errorf("the build account is not denied %s", deny)
		}
	}
}

// TestLedgerPaths: the ledger of a build's grants, read back at the next start of an agent that
// died, gives each absolute directory once and skips what is not one.
func TestLedgerPaths(t *testing.T) {
	ws, archive := filepath.Join(t.TempDir(), "ws"), filepath.Join(t.TempDir(), "archive")
	raw := ws + "\n\n" + archive + "\r\nrelative\\dir\n" + ws + "\n"
	if got, want := ledgerPaths(raw), []string{ws, archive}; !slices.Equal(got, want) {
		t.Errorf("ledgerPaths = %q, want %q", got, want)
	}
	if got := ledgerPaths(""); len(got) != 0 {
		t.Errorf("an empty ledger gives %q", got)
	}
}
