package sandbox

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
)

// Account confines the steps of a Windows agent (KILN_SANDBOX=account): each step runs as a local
// low-privilege account of its own (kiln-build), not as the agent's account. The agent, a service
// running as LocalSystem, creates the account if it is missing, sets a new random password at
// every start (kept in memory only, never written anywhere), logs it on as a batch job and starts
// the engine with that logon's token. The build's workspace, archive and scratch directories
// give the account modify rights, the engine read and execute, the checkout's .git none to write;
// nothing else of the agent's grants it anything. A process of another, non-administrator account
// cannot open the agent's process (its DACL names only SYSTEM and Administrators) nor read files
// whose ACL does not name it, such as the agent's token file.
//
// Make it with OpenAccount, which fails outside Windows and where the agent lacks the rights to
// manage accounts and start processes as another user.
type Account struct {
	// Name is the local account builds run as; "" is DefaultBuildAccount.
	Name string
	// ReadOnly are more directories the account may read and execute (SDKs outside the engine).
	ReadOnly []string
	// PassEnv names variables of the agent's environment handed to steps as they are
	// (ANDROID_HOME, JAVA_HOME, ...); never a KILN_ one.
	PassEnv []string
	// Private are directories of the agent's (its work directory) whose ACL OpenAccount makes
	// the agent's only: SYSTEM, Administrators and the agent's account. A step is then given its
	// own workspace inside for as long as it runs, and nothing else there.
	Private []string
}

// DefaultBuildAccount is the local account Windows builds run as by default.
const DefaultBuildAccount = "kiln-build"

// accountRights are the rights the build account gets (LsaAddAccountRights): it may be logged on
// as a batch job, the logon kiln uses, and in no other way: not at the console, not over Remote
// Desktop, not from the network, not as a service. A password that leaked would open nothing.
var accountRights = []string{
	"SeBatchLogonRight",
	"SeDenyInteractiveLogonRight",
	"SeDenyRemoteInteractiveLogonRight",
	"SeDenyNetworkLogonRight",
	"SeDenyServiceLogonRight",
}

// CheckAccountName refuses what cannot be a local account name of Windows (at most 20
// characters, none of "/\[]:;|=,+*?<>@, not only dots and spaces) and the names of Windows' own
// accounts, which builds must never run as.
func CheckAccountName(name string) error {
	switch {
	case name == "":
		return errors.New("the build account's name is empty")
	case len([]rune(name)) > 20:
		return fmt.Errorf("%q is longer than the 20 characters of a Windows account name", name)
	case strings.ContainsAny(name, "\"/\\[]:;|=,+*?<>@") || strings.IndexFunc(name, func(r rune) bool { return r < 32 }) >= 0:
		return fmt.Errorf("%q holds a character a Windows account name cannot (\"/\\[]:;|=,+*?<>@)", name)
	case strings.Trim(name, ". ") == "":
		return fmt.Errorf("%q is only dots and spaces", name)
	}
	for _, reserved := range []string{"Administrator", "Guest", "DefaultAccount", "WDAGUtilityAccount", "SYSTEM",
		"LocalSystem", "LocalService", "NetworkService", "krbtgt"} {
		if strings.EqualFold(name, reserved) {
			return fmt.Errorf("%q is one of Windows' own accounts: builds need an account of their own", name)
		}
	}
	return nil
}

// passwordLen is the length of the build account's password: far beyond any password policy's
// minimum, and 14 characters or more is what Windows asks of new accounts at most.
const passwordLen = 32

// passwordClasses are the character classes a password draws from; it holds one of each, so that
// it passes Windows' complexity rule (three classes of four) whatever the policy.
var passwordClasses = []string{
	"ABCDEFGHJKLMNPQRSTUVWXYZ",
	"abcdefghijkmnopqrstuvwxyz",
	"23456789",
	"!#$%&()*+-.:;<=>?@[]^_{}~",
}

// newPassword draws a password from random: passwordLen characters with one of each class at
// least. Nothing keeps it but the caller, which logs the account on with it and drops it.
func newPassword(random io.Reader) (string, error) {
	all := strings.Join(passwordClasses, "")
	// 256 is not a multiple of len(all): bytes from limit up are dropped rather than skew the draw.
	limit := 256 - 256%len(all)
	buf := make([]byte, 1)
	for range 100 {
		var b strings.Builder
		for range 4 * passwordLen {
			if b.Len() == passwordLen {
				break
			}
			if _, err := io.ReadFull(random, buf); err != nil {
				return "", fmt.Errorf("sandbox: build account password: %w", err)
			}
			if int(buf[0]) < limit {
				b.WriteByte(all[int(buf[0])%len(all)])
			}
		}
		if pw := b.String(); len(pw) == passwordLen && hasEveryClass(pw) {
			return pw, nil
		}
	}
	return "", errors.New("sandbox: build account password: the random source gave no usable password")
}

func hasEveryClass(pw string) bool {
	for _, class := range passwordClasses {
		if !strings.ContainsAny(pw, class) {
			return false
		}
	}
	return true
}

// accountEnv is a step's whole environment: the account's own (the system's variables and its
// profile's: USERPROFILE, APPDATA, LOCALAPPDATA, ...), TEMP and TMP in the jail, the variables
// of passEnv as the agent has them, and the jail's. Names compare without case, as Windows
// compares them; a later setting replaces an earlier one. No KILN_ variable ever gets in.
func accountEnv(accountEnv, agentEnv, passEnv []string, j Jail) []string {
	var out []string
	set := func(kv string) {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || strings.HasPrefix(strings.ToUpper(name), "KILN_") {
			return
		}
		out = slices.DeleteFunc(out, func(have string) bool {
			n, _, _ := strings.Cut(have, "=")
			return strings.EqualFold(n, name)
		})
		out = append(out, kv)
	}
	for _, kv := range accountEnv {
		set(kv)
	}
	if j.Tmp != "" {
		set("TEMP=" + j.Tmp)
		set("TMP=" + j.Tmp)
	}
	for _, name := range passEnv {
		for _, kv := range agentEnv {
			if n, _, _ := strings.Cut(kv, "="); strings.EqualFold(n, name) {
				set(kv)
			}
		}
	}
	for _, kv := range j.Env {
		set(kv)
	}
	return out
}

// Access rights of files and directories the build account is given (winnt.h).
const (
	// accessModify is "Modify": read, write, execute and delete, but not change permissions or
	// take ownership (FILE_GENERIC_READ|FILE_GENERIC_WRITE|FILE_GENERIC_EXECUTE|DELETE).
	accessModify = 0x1301bf
	// accessReadExecute is "Read & execute" (FILE_GENERIC_READ|FILE_GENERIC_EXECUTE).
	accessReadExecute = 0x1200a9
	// accessWriteAndDelete is what a protected path denies: writing data, attributes and
	// extended attributes, appending, adding and deleting children, and deleting or renaming it
	// (FILE_WRITE_DATA|FILE_APPEND_DATA|FILE_WRITE_EA|FILE_DELETE_CHILD|FILE_WRITE_ATTRIBUTES|
	// DELETE|WRITE_DAC|WRITE_OWNER).
	accessWriteAndDelete = 0x2 | 0x4 | 0x10 | 0x40 | 0x100 | 0x10000 | 0x40000 | 0x80000
)

// grant is one access control entry the build account gets on a path, inherited by everything
// under it.
type grant struct {
	Path   string
	Access uint32
	Deny   bool
}

// accountGrants are the entries a jail needs: the writable directories modify, the read-only
// ones (the engine, and more, such as SDKs) read and execute, the protected paths inside the
// writable ones a denial of every write (a deny entry wins over the allow it inherits).
func accountGrants(j Jail, moreReadOnly []string) []grant {
	var out []grant
	for _, d := range j.Writable {
		out = append(out, grant{Path: d, Access: accessModify})
	}
	for _, d := range slices.Concat(moreReadOnly, j.ReadOnly) {
		out = append(out, grant{Path: d, Access: accessReadExecute})
	}
	for _, p := range j.Protected {
		out = append(out, grant{Path: p, Access: accessWriteAndDelete, Deny: true})
	}
	return out
}

// ledgerPaths reads a ledger of granted directories: one absolute path a line; anything else
// (blank lines, a relative path from a damaged file) is skipped.
func ledgerPaths(raw string) []string {
	var out []string
	for _, line := range strings.Split(raw, "\n") {
		line = strings.TrimSpace(line)
		if line != "" && filepath.IsAbs(line) && !slices.Contains(out, line) {
			out = append(out, line)
		}
	}
	return out
}

// agentOnlySDDL is the security descriptor of what only the agent may reach: a protected DACL
// (nothing inherited from above) with full control for SYSTEM, Administrators and the agent's
// own account (selfSID), inherited by everything under it. OWNER RIGHTS gets only to read the
// permissions: a file the build account created stays its own, but once the build's grant is
// gone it cannot give itself access again through an owner's implicit right to change them.
func agentOnlySDDL(selfSID string) string {
	sddl := "D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)"
	if selfSID != "" && selfSID != "S-1-5-18" && selfSID != "S-1-5-32-544" {
		sddl += "(A;OICI;FA;;;" + selfSID + ")"
	}
	return sddl + "(A;OICI;RC;;;OW)"
}
