//go:build windows

package sandbox

import (
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The Windows calls that golang.org/x/sys/windows does not wrap.
var (
	modAdvapi32 = windows.NewLazySystemDLL("advapi32.dll")
	modNetapi32 = windows.NewLazySystemDLL("netapi32.dll")
	modUserenv  = windows.NewLazySystemDLL("userenv.dll")

	procLogonUserW            = modAdvapi32.NewProc("LogonUserW")
	procAdjustTokenPrivileges = modAdvapi32.NewProc("AdjustTokenPrivileges")
	procLsaOpenPolicy         = modAdvapi32.NewProc("LsaOpenPolicy")
	procLsaAddAccountRights   = modAdvapi32.NewProc("LsaAddAccountRights")
	procLsaClose              = modAdvapi32.NewProc("LsaClose")
	procLsaNtStatusToWinError = modAdvapi32.NewProc("LsaNtStatusToWinError")
	procNetUserAdd            = modNetapi32.NewProc("NetUserAdd")
	procNetUserSetInfo        = modNetapi32.NewProc("NetUserSetInfo")
	procLoadUserProfileW      = modUserenv.NewProc("LoadUserProfileW")
	procUnloadUserProfile     = modUserenv.NewProc("UnloadUserProfile")
)

// findProcs checks that every call above exists here, rather than panic at the first use.
func findProcs() error {
	for _, p := range []*windows.LazyProc{procLogonUserW, procAdjustTokenPrivileges, procLsaOpenPolicy, procLsaAddAccountRights,
		procLsaClose, procLsaNtStatusToWinError, procNetUserAdd, procNetUserSetInfo, procLoadUserProfileW, procUnloadUserProfile} {
		if err := p.Find(); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
	}
	return nil
}

func unsafePointer[T any](p *T) unsafe.Pointer { return unsafe.Pointer(p) }

// tokenDefaultDACL is TOKEN_DEFAULT_DACL.
type tokenDefaultDACL struct{ DefaultDacl *windows.ACL }

const (
	sizeofDefaultDACL  = unsafe.Sizeof(tokenDefaultDACL{})
	sizeofProcessEntry = unsafe.Sizeof(windows.ProcessEntry32{})
)

// USER_INFO_1, USER_INFO_1003 and USER_INFO_1008 of lmaccess.h.
type userInfo1 struct {
	Name        *uint16
	Password    *uint16
	PasswordAge uint32
	Priv        uint32
	HomeDir     *uint16
	Comment     *uint16
	Flags       uint32
	ScriptPath  *uint16
}

type userInfo1003 struct{ Password *uint16 }

type userInfo1008 struct{ Flags uint32 }

const (
	userPrivUser       = 1
	ufScript           = 0x1
	ufAccountDisable   = 0x2
	ufPasswdCantChange = 0x40
	ufNormalAccount    = 0x200
	ufDontExpirePasswd = 0x10000

	nerrUserNotFound = 2221

	logon32LogonBatch      = 4
	logon32ProviderDefault = 0

	piNoUI = 1

	policyCreateAccount = 0x10
	policyLookupNames   = 0x800
)

// accountFlags are the build account's: a normal account whose password never expires and that
// cannot change it (kiln sets a new one at every start).
const accountFlags = ufScript | ufNormalAccount | ufDontExpirePasswd | ufPasswdCantChange

// netError describes a NET_API_STATUS (the NERR_ codes have no system message).
func netError(what string, code uintptr) error {
	known := map[uintptr]string{
		2221: "the account does not exist",
		2224: "the account exists already",
		2226: "this machine is not where its accounts are kept (a domain controller's accounts are the domain's)",
		2245: "the password does not meet this machine's password policy",
	}
	if msg, ok := known[code]; ok {
		return fmt.Errorf("sandbox: %s: %s (NET_API_STATUS %d)", what, msg, code)
	}
	return fmt.Errorf("sandbox: %s: %w", what, syscall.Errno(code))
}

// ensureUser creates the local account name with password, or, when it exists, sets its password
// and flags (enabled, password never expires).
func ensureUser(name, password string) error {
	n, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	p, err := windows.UTF16PtrFromString(password)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	var buf *byte
	err = windows.NetUserGetInfo(nil, n, 1, &buf)
	if err == nil {
		flags := (*userInfo1)(unsafe.Pointer(buf)).Flags
		windows.NetApiBufferFree(buf)
		pw := userInfo1003{Password: p}
		if r, _, _ := procNetUserSetInfo.Call(0, uintptr(unsafe.Pointer(n)), 1003, uintptr(unsafe.Pointer(&pw)), 0); r != 0 {
			return netError("setting the build account's password", r)
		}
		f := userInfo1008{Flags: flags&^ufAccountDisable | accountFlags}
		if r, _, _ := procNetUserSetInfo.Call(0, uintptr(unsafe.Pointer(n)), 1008, uintptr(unsafe.Pointer(&f)), 0); r != 0 {
			return netError("enabling the build account", r)
		}
		return nil
	}
	if err != syscall.Errno(nerrUserNotFound) {
		return fmt.Errorf("sandbox: looking up the build account %s: %w", name, err)
	}
	comment, _ := windows.UTF16PtrFromString("kiln builds; kiln agent sets a new password at every start")
	info := userInfo1{Name: n, Password: p, Priv: userPrivUser, Comment: comment, Flags: accountFlags}
	if r, _, _ := procNetUserAdd.Call(0, 1, uintptr(unsafe.Pointer(&info)), 0); r != 0 {
		return netError("creating the local account "+name, r)
	}
	return nil
}

// lsaUnicodeString is LSA_UNICODE_STRING.
type lsaUnicodeString struct {
	Length, MaximumLength uint16
	Buffer                *uint16
}

// lsaObjectAttributes is LSA_OBJECT_ATTRIBUTES (all zero but its length).
type lsaObjectAttributes struct {
	Length                   uint32
	RootDirectory            windows.Handle
	ObjectName               *lsaUnicodeString
	Attributes               uint32
	SecurityDescriptor       unsafe.Pointer
	SecurityQualityOfService unsafe.Pointer
}

func lsaString(s string) (lsaUnicodeString, error) {
	u, err := windows.UTF16FromString(s)
	if err != nil {
		return lsaUnicodeString{}, err
	}
	n := uint16((len(u) - 1) * 2)
	return lsaUnicodeString{Length: n, MaximumLength: n + 2, Buffer: &u[0]}, nil
}

func lsaError(what string, status uintptr) error {
	code, _, _ := procLsaNtStatusToWinError.Call(status)
	return fmt.Errorf("sandbox: %s: %w", what, syscall.Errno(code))
}

// addAccountRights grants sid the user rights named (the local security policy's).
func addAccountRights(sid *windows.SID, rights []string) error {
	attrs := lsaObjectAttributes{Length: uint32(unsafe.Sizeof(lsaObjectAttributes{}))}
	var policy windows.Handle
	if st, _, _ := procLsaOpenPolicy.Call(0, uintptr(unsafe.Pointer(&attrs)), policyCreateAccount|policyLookupNames,
		uintptr(unsafe.Pointer(&policy))); st != 0 {
		return lsaError("opening the local security policy", st)
	}
	defer procLsaClose.Call(uintptr(policy))
	strs := make([]lsaUnicodeString, 0, len(rights))
	for _, r := range rights {
		s, err := lsaString(r)
		if err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
		strs = append(strs, s)
	}
	if st, _, _ := procLsaAddAccountRights.Call(uintptr(policy), uintptr(unsafe.Pointer(sid)),
		uintptr(unsafe.Pointer(&strs[0])), uintptr(len(strs))); st != 0 {
		return lsaError(fmt.Sprintf("granting the build account its logon rights (%v)", rights), st)
	}
	return nil
}

// logonBatch logs name of this machine on as a batch job and returns its primary token.
func logonBatch(name, password string) (windows.Token, error) {
	n, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return 0, fmt.Errorf("sandbox: %w", err)
	}
	dot, _ := windows.UTF16PtrFromString(".")
	p, err := windows.UTF16PtrFromString(password)
	if err != nil {
		return 0, fmt.Errorf("sandbox: %w", err)
	}
	var t windows.Token
	r, _, callErr := procLogonUserW.Call(uintptr(unsafe.Pointer(n)), uintptr(unsafe.Pointer(dot)), uintptr(unsafe.Pointer(p)),
		logon32LogonBatch, logon32ProviderDefault, uintptr(unsafe.Pointer(&t)))
	if r == 0 {
		return 0, fmt.Errorf("sandbox: logging the build account %s on as a batch job: %w", name, callErr)
	}
	return t, nil
}

// profileInfo is PROFILEINFOW.
type profileInfo struct {
	Size        uint32
	Flags       uint32
	UserName    *uint16
	ProfilePath *uint16
	DefaultPath *uint16
	ServerName  *uint16
	PolicyPath  *uint16
	Profile     windows.Handle
}

// loadProfile loads the account's profile (made at the first load, under C:\Users): its registry
// hive and folders are where UnrealBuildTool, MSBuild and the compilers keep their settings.
func loadProfile(t windows.Token, name string) (windows.Handle, error) {
	n, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return 0, fmt.Errorf("sandbox: %w", err)
	}
	pi := profileInfo{Size: uint32(unsafe.Sizeof(profileInfo{})), Flags: piNoUI, UserName: n}
	if r, _, callErr := procLoadUserProfileW.Call(uintptr(t), uintptr(unsafe.Pointer(&pi))); r == 0 {
		return 0, fmt.Errorf("sandbox: loading the build account's profile: %w", callErr)
	}
	return pi.Profile, nil
}

// enablePrivileges enables the privileges named in this process's token, or says which it lacks.
func enablePrivileges(names ...string) error {
	var t windows.Token
	if err := windows.OpenProcessToken(windows.CurrentProcess(), windows.TOKEN_ADJUST_PRIVILEGES|windows.TOKEN_QUERY, &t); err != nil {
		return err
	}
	defer t.Close()
	for _, name := range names {
		var luid windows.LUID
		if err := windows.LookupPrivilegeValue(nil, windows.StringToUTF16Ptr(name), &luid); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		tp := windows.Tokenprivileges{PrivilegeCount: 1}
		tp.Privileges[0] = windows.LUIDAndAttributes{Luid: luid, Attributes: windows.SE_PRIVILEGE_ENABLED}
		r, _, callErr := procAdjustTokenPrivileges.Call(uintptr(t), 0, uintptr(unsafe.Pointer(&tp)), 0, 0, 0)
		if r == 0 {
			return fmt.Errorf("%s: %w", name, callErr)
		}
		// AdjustTokenPrivileges succeeds without enabling a privilege the token does not hold.
		if callErr == windows.ERROR_NOT_ALL_ASSIGNED {
			return fmt.Errorf("this agent's account does not hold %s", name)
		}
	}
	return nil
}

var (
	modUser32                   = windows.NewLazySystemDLL("user32.dll")
	procGetProcessWindowStation = modUser32.NewProc("GetProcessWindowStation")
	procGetThreadDesktop        = modUser32.NewProc("GetThreadDesktop")
)

// What the build account may do with the agent's window station and desktop: without them a
// process started with another account's token from a service fails to initialise user32.dll
// (cmd.exe and most tools load it), even with no window to show.
const (
	// WINSTA_ENUMDESKTOPS|WINSTA_READATTRIBUTES|WINSTA_ACCESSGLOBALATOMS|WINSTA_ENUMERATE|READ_CONTROL
	winstaBuildAccess = 0x1 | 0x2 | 0x20 | 0x100 | 0x20000
	// DESKTOP_READOBJECTS|DESKTOP_CREATEWINDOW|DESKTOP_CREATEMENU|DESKTOP_ENUMERATE|DESKTOP_WRITEOBJECTS|READ_CONTROL
	desktopBuildAccess = 0x1 | 0x2 | 0x4 | 0x40 | 0x80 | 0x20000
)

// grantDesktop lets sid use this process's window station and desktop.
func grantDesktop(sid *windows.SID) error {
	winsta, _, err := procGetProcessWindowStation.Call()
	if winsta == 0 {
		return fmt.Errorf("sandbox: the agent's window station: %w", err)
	}
	desktop, _, err := procGetThreadDesktop.Call(uintptr(windows.GetCurrentThreadId()))
	if desktop == 0 {
		return fmt.Errorf("sandbox: the agent's desktop: %w", err)
	}
	for _, o := range []struct {
		what   string
		h      windows.Handle
		access uint32
	}{{"window station", windows.Handle(winsta), winstaBuildAccess}, {"desktop", windows.Handle(desktop), desktopBuildAccess}} {
		sd, err := windows.GetSecurityInfo(o.h, windows.SE_WINDOW_OBJECT, windows.DACL_SECURITY_INFORMATION)
		if err != nil {
			return fmt.Errorf("sandbox: reading the ACL of the agent's %s: %w", o.what, err)
		}
		dacl, _, err := sd.DACL()
		if err != nil {
			return fmt.Errorf("sandbox: reading the ACL of the agent's %s: %w", o.what, err)
		}
		if hasEntry(dacl, sid, grant{Access: o.access}, 0) {
			continue
		}
		acl, err := windows.ACLFromEntries([]windows.EXPLICIT_ACCESS{{AccessPermissions: windows.ACCESS_MASK(o.access),
			AccessMode: windows.GRANT_ACCESS, Inheritance: windows.NO_INHERITANCE, Trustee: sidTrustee(sid)}}, dacl)
		if err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
		if err := windows.SetSecurityInfo(o.h, windows.SE_WINDOW_OBJECT, windows.DACL_SECURITY_INFORMATION, nil, nil, acl, nil); err != nil {
			return fmt.Errorf("sandbox: letting the build account use the agent's %s: %w", o.what, err)
		}
	}
	return nil
}
