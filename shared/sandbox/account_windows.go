//go:build windows

package sandbox

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/windows"
)

// accountConfiner runs steps as the build account, logged on once at OpenAccount.
type accountConfiner struct {
	name     string
	sid      *windows.SID
	token    windows.Token
	profile  windows.Handle
	env      []string // the account's own environment (system and profile variables)
	passEnv  []string
	readOnly []string
	// ledger is the file that lists the directories granted to the running step (none without
	// Private), so that the grants of a step whose agent died are revoked at the next start.
	ledger  string
	pending []string // the granted directories when there is no ledger

	// busy is held from a step's Prepare to its Done: Done kills every process of the account,
	// so two steps never run at once (kiln agent runs one build at a time anyway).
	busy      sync.Mutex
	closeOnce sync.Once
}

var _ Confiner = (*accountConfiner)(nil)

// OpenAccount sets the build account up (see Account) and logs it on. It needs the rights of
// LocalSystem: to create the account and reset its password (an administrator's), to grant it
// logon rights (LsaAddAccountRights), to load its profile (backup and restore privileges) and to
// start a process with another user's token (SeAssignPrimaryTokenPrivilege, which
// administrators' accounts do not hold by default; services as LocalSystem do).
func OpenAccount(_ context.Context, a Account) (Confiner, error) {
	name := cmp.Or(a.Name, DefaultBuildAccount)
	if err := CheckAccountName(name); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if err := findProcs(); err != nil {
		return nil, err
	}
	if err := enablePrivileges("SeAssignPrimaryTokenPrivilege", "SeIncreaseQuotaPrivilege"); err != nil {
		return nil, fmt.Errorf("sandbox: starting builds as another account takes the privileges of a service running as LocalSystem: %w", err)
	}
	// LoadUserProfile asks for these; an administrator's token holds them, LocalSystem's too.
	if err := enablePrivileges("SeBackupPrivilege", "SeRestorePrivilege"); err != nil {
		return nil, fmt.Errorf("sandbox: loading the build account's profile: %w", err)
	}
	self, err := currentUser()
	if err != nil {
		return nil, err
	}
	for _, dir := range a.Private {
		if err := makePrivate(dir, self); err != nil {
			return nil, err
		}
	}
	password, err := newPassword(rand.Reader)
	if err != nil {
		return nil, err
	}
	if err := ensureUser(name, password); err != nil {
		return nil, err
	}
	sid, err := localAccountSID(name)
	if err != nil {
		return nil, err
	}
	if sid.Equals(self) {
		return nil, fmt.Errorf("sandbox: the build account %s is the agent's own account: builds need an account of their own", name)
	}
	if err := addAccountRights(sid, accountRights); err != nil {
		return nil, err
	}
	token, err := logonBatch(name, password)
	if err != nil {
		return nil, err
	}
	c := &accountConfiner{name: name, sid: sid, token: token, passEnv: slices.Clone(a.PassEnv), readOnly: slices.Clone(a.ReadOnly)}
	if len(a.Private) > 0 {
		c.ledger = filepath.Join(a.Private[0], grantsLedger)
	}
	if err := c.setUp(self); err != nil {
		c.Close()
		return nil, err
	}
	// What a build of an agent that died left running goes now, and so do its grants.
	if err := killAccountProcesses(sid); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.revokeLedger(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// setUp checks the logged-on token, loads the account's profile, reads its environment and
// makes the processes started with the token openable by the agent (to put them in a job
// object, resume and kill them) as well as by the account itself.
func (c *accountConfiner) setUp(self *windows.SID) error {
	groups, err := c.token.GetTokenGroups()
	if err != nil {
		return fmt.Errorf("sandbox: the build account's groups: %w", err)
	}
	for _, g := range groups.AllGroups() {
		if g.Sid.IsWellKnown(windows.WinBuiltinAdministratorsSid) || g.Sid.IsWellKnown(windows.WinBuiltinBackupOperatorsSid) {
			return fmt.Errorf("sandbox: the build account %s is a member of %s: remove it from that group (a build would then be "+
				"an administrator of this machine)", c.name, g.Sid)
		}
	}
	if err := grantDesktop(c.sid); err != nil {
		return err
	}
	profile, err := loadProfile(c.token, c.name)
	if err != nil {
		return err
	}
	c.profile = profile
	if c.env, err = c.token.Environ(false); err != nil {
		return fmt.Errorf("sandbox: the build account's environment: %w", err)
	}
	system, err := windows.CreateWellKnownSid(windows.WinLocalSystemSid)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	var entries []windows.EXPLICIT_ACCESS
	for _, s := range []*windows.SID{system, self, c.sid} {
		entries = append(entries, windows.EXPLICIT_ACCESS{AccessPermissions: windows.GENERIC_ALL, AccessMode: windows.GRANT_ACCESS,
			Inheritance: windows.NO_INHERITANCE, Trustee: sidTrustee(s)})
	}
	acl, err := windows.ACLFromEntries(entries, nil)
	if err != nil {
		return fmt.Errorf("sandbox: the build processes' default ACL: %w", err)
	}
	info := tokenDefaultDACL{DefaultDacl: acl}
	if err := windows.SetTokenInformation(c.token, windows.TokenDefaultDacl, (*byte)(unsafePointer(&info)), uint32(sizeofDefaultDACL)); err != nil {
		return fmt.Errorf("sandbox: the build processes' default ACL: %w", err)
	}
	return nil
}

// Prepare returns the command, run as the build account, with the jail's directories granted to
// it until Done.
func (c *accountConfiner) Prepare(j Jail, path string, args ...string) (*Step, error) {
	for _, d := range slices.Concat([]string{j.Dir}, j.ReadOnly, j.Writable, j.Protected) {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("sandbox: jail path %q is not absolute", d)
		}
	}
	if !c.busy.TryLock() {
		return nil, &Error{Reason: fmt.Sprintf("build sandbox: another build runs as the build account %s on this machine", c.name)}
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = j.Dir
	cmd.Env = accountEnv(c.env, os.Environ(), c.passEnv, j)
	cmd.SysProcAttr = &syscall.SysProcAttr{Token: syscall.Token(c.token)}
	s := &Step{Cmd: cmd, HostUID: -1}
	s.onDone(c.busy.Unlock)
	var granted []string
	s.onDone(func() {
		// Nothing of the build runs on, and its workspace is the agent's only again.
		_ = killAccountProcesses(c.sid)
		_ = c.revokeLedger()
	})
	grants := accountGrants(j, c.readOnly)
	for _, g := range grants {
		if !g.Deny && g.Access == accessModify {
			granted = append(granted, g.Path)
		}
	}
	if err := c.writeLedger(granted); err != nil {
		s.Done()
		return nil, err
	}
	for _, g := range grants {
		if err := grantAccess(g, c.sid); err != nil {
			s.Done()
			return nil, err
		}
	}
	return s, nil
}

// grantsLedger is the name of the ledger in the agent's first private directory.
const grantsLedger = ".kiln-build-account-grants"

// writeLedger records the directories about to be granted, before they are.
func (c *accountConfiner) writeLedger(paths []string) error {
	if c.ledger == "" {
		c.pending = paths
		return nil
	}
	if err := os.WriteFile(c.ledger, []byte(strings.Join(paths, "\n")+"\n"), 0o600); err != nil {
		return fmt.Errorf("sandbox: recording the build's grants: %w", err)
	}
	return nil
}

// revokeLedger revokes the build account's grants on the directories of the ledger, then
// removes it.
func (c *accountConfiner) revokeLedger() error {
	paths := c.pending
	if c.ledger != "" {
		raw, err := os.ReadFile(c.ledger)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("sandbox: reading the build's grants: %w", err)
		}
		paths = ledgerPaths(string(raw))
	}
	for _, p := range paths {
		if err := revoke(p, c.sid); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, windows.ERROR_FILE_NOT_FOUND) &&
			!errors.Is(err, windows.ERROR_PATH_NOT_FOUND) {
			return fmt.Errorf("sandbox: taking %s back from the build account: %w", p, err)
		}
	}
	c.pending = nil
	if c.ledger != "" {
		if err := os.Remove(c.ledger); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("sandbox: %w", err)
		}
	}
	return nil
}

// Close logs the account off (its profile unloaded, the token closed).
func (c *accountConfiner) Close() error {
	c.closeOnce.Do(func() {
		if c.profile != 0 {
			procUnloadUserProfile.Call(uintptr(c.token), uintptr(c.profile))
		}
		c.token.Close()
	})
	return nil
}

// makePrivate gives dir (or a file) a protected ACL for SYSTEM, Administrators and the agent only.
func makePrivate(dir string, self *windows.SID) error {
	sddl := agentOnlySDDL(self.String())
	if fi, err := os.Stat(dir); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	} else if !fi.IsDir() {
		sddl = strings.ReplaceAll(sddl, "OICI", "") // a file has nothing to pass its entries on to
	}
	sd, err := windows.SecurityDescriptorFromString(sddl)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	if err := windows.SetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil); err != nil {
		return fmt.Errorf("sandbox: making %s the agent's only: %w", dir, err)
	}
	return nil
}

// grantAccess adds g's entry for sid to g.Path's ACL (inherited by what is under a directory),
// unless it holds it already: propagating an entry through an engine's tree takes a while.
func grantAccess(g grant, sid *windows.SID) error {
	fi, err := os.Stat(g.Path)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	inherit := uint32(windows.NO_INHERITANCE)
	if fi.IsDir() {
		inherit = windows.SUB_CONTAINERS_AND_OBJECTS_INHERIT
	}
	sd, err := windows.GetNamedSecurityInfo(g.Path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return fmt.Errorf("sandbox: reading the ACL of %s: %w", g.Path, err)
	}
	dacl, _, err := sd.DACL()
	if err != nil && !errors.Is(err, windows.ERROR_OBJECT_NOT_FOUND) {
		return fmt.Errorf("sandbox: reading the ACL of %s: %w", g.Path, err)
	}
	if hasEntry(dacl, sid, g, uint8(inherit)) {
		return nil
	}
	mode := windows.ACCESS_MODE(windows.GRANT_ACCESS)
	if g.Deny {
		mode = windows.DENY_ACCESS
	}
	acl, err := windows.ACLFromEntries([]windows.EXPLICIT_ACCESS{{AccessPermissions: windows.ACCESS_MASK(g.Access),
		AccessMode: mode, Inheritance: inherit, Trustee: sidTrustee(sid)}}, dacl)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	if err := windows.SetNamedSecurityInfo(g.Path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION, nil, nil, acl, nil); err != nil {
		return fmt.Errorf("sandbox: giving the build account access to %s: %w", g.Path, err)
	}
	return nil
}

// hasEntry says whether dacl holds g for sid already, as an entry of its own (not inherited).
func hasEntry(dacl *windows.ACL, sid *windows.SID, g grant, inherit uint8) bool {
	if dacl == nil {
		return false
	}
	want := uint8(windows.ACCESS_ALLOWED_ACE_TYPE)
	if g.Deny {
		want = windows.ACCESS_DENIED_ACE_TYPE
	}
	for i := range uint32(dacl.AceCount) {
		var ace *windows.ACCESS_ALLOWED_ACE // an access-denied entry has the same layout
		if windows.GetAce(dacl, i, &ace) != nil {
			return false
		}
		if ace.Header.AceType != want || ace.Header.AceFlags&windows.INHERITED_ACE != 0 ||
			ace.Header.AceFlags&inherit != inherit || uint32(ace.Mask)&g.Access != g.Access {
			continue
		}
		if (*windows.SID)(unsafePointer(&ace.SidStart)).Equals(sid) {
			return true
		}
	}
	return false
}

// revoke removes the entries that allow sid anything on path.
func revoke(path string, sid *windows.SID) error {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return err
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return err
	}
	acl, err := windows.ACLFromEntries([]windows.EXPLICIT_ACCESS{{AccessMode: windows.REVOKE_ACCESS, Trustee: sidTrustee(sid)}}, dacl)
	if err != nil {
		return err
	}
	return windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION, nil, nil, acl, nil)
}

func sidTrustee(sid *windows.SID) windows.TRUSTEE {
	return windows.TRUSTEE{TrusteeForm: windows.TRUSTEE_IS_SID, TrusteeType: windows.TRUSTEE_IS_UNKNOWN, TrusteeValue: windows.TrusteeValueFromSID(sid)}
}

// currentUser is the SID of the account the agent runs as.
func currentUser() (*windows.SID, error) {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, fmt.Errorf("sandbox: the agent's account: %w", err)
	}
	return u.User.Sid.Copy()
}

// localAccountSID looks name up among this machine's accounts (never a domain's of that name).
func localAccountSID(name string) (*windows.SID, error) {
	computer, err := windows.ComputerName()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	sid, _, typ, err := windows.LookupSID("", computer+`\`+name)
	if err != nil {
		return nil, fmt.Errorf("sandbox: looking up the build account %s: %w", name, err)
	}
	if typ != windows.SidTypeUser {
		return nil, fmt.Errorf("sandbox: %s on this machine is not a user account", name)
	}
	return sid, nil
}

// killAccountProcesses terminates every process that runs as sid, over and over until none is
// left (a process may start another while the list is read).
func killAccountProcesses(sid *windows.SID) error {
	for range 10 {
		pids, err := accountProcesses(sid)
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		for _, pid := range pids {
			if h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, pid); err == nil {
				_ = windows.TerminateProcess(h, 1)
				windows.CloseHandle(h)
			}
		}
	}
	return fmt.Errorf("sandbox: processes of the build account keep running after being killed ten times")
}

// accountProcesses lists the processes that run as sid.
func accountProcesses(sid *windows.SID) ([]uint32, error) {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: list processes: %w", err)
	}
	defer windows.CloseHandle(snap)
	entry := windows.ProcessEntry32{Size: uint32(sizeofProcessEntry)}
	var pids []uint32
	for err = windows.Process32First(snap, &entry); err == nil; err = windows.Process32Next(snap, &entry) {
		if runsAs(entry.ProcessID, sid) {
			pids = append(pids, entry.ProcessID)
		}
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return nil, fmt.Errorf("sandbox: list processes: %w", err)
	}
	return pids, nil
}

func runsAs(pid uint32, sid *windows.SID) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var t windows.Token
	if windows.OpenProcessToken(h, windows.TOKEN_QUERY, &t) != nil {
		return false
	}
	defer t.Close()
	u, err := t.GetTokenUser()
	return err == nil && u.User.Sid.Equals(sid)
}
