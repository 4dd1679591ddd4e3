package main

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

// checkSecretFile refuses a secret file that an account other than SYSTEM, Administrators and
// this agent's own can read (see secretReaders): on Windows an ACL, not a mode, keeps it secret,
// and a build running as another account must not be able to read it.
func checkSecretFile(path, setting string) error {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
		windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return fmt.Errorf("%s: reading the ACL of %s: %w", setting, path, err)
	}
	var owner string
	if o, _, err := sd.Owner(); err == nil && o != nil {
		owner = o.String()
	}
	dacl, _, err := sd.DACL()
	nullDACL := errors.Is(err, windows.ERROR_OBJECT_NOT_FOUND) || (err == nil && dacl == nil)
	if err != nil && !nullDACL {
		return fmt.Errorf("%s: reading the ACL of %s: %w", setting, path, err)
	}
	var entries []aclEntry
	if dacl != nil {
		for i := range uint32(dacl.AceCount) {
			var ace *windows.ACCESS_ALLOWED_ACE
			if err := windows.GetAce(dacl, i, &ace); err != nil {
				return fmt.Errorf("%s: reading the ACL of %s: %w", setting, path, err)
			}
			switch ace.Header.AceType {
			case windows.ACCESS_ALLOWED_ACE_TYPE, windows.ACCESS_DENIED_ACE_TYPE:
			default:
				continue // object and callback entries: not what an icacls'd file holds
			}
			sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
			entries = append(entries, aclEntry{SID: sid.String(), Deny: ace.Header.AceType == windows.ACCESS_DENIED_ACE_TYPE,
				Mask: uint32(ace.Mask), InheritOnly: ace.Header.AceFlags&windows.INHERIT_ONLY_ACE != 0})
		}
	}
	self, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return fmt.Errorf("%s: this agent's account: %w", setting, err)
	}
	readers := secretReaders(owner, entries, nullDACL, []string{sidSystem, sidAdministrators, self.User.Sid.String()})
	if len(readers) == 0 {
		return nil
	}
	names := make([]string, 0, len(readers))
	for _, r := range readers {
		names = append(names, accountName(r))
	}
	grant := "SYSTEM:F Administrators:F"
	if !self.User.Sid.IsWellKnown(windows.WinLocalSystemSid) {
		grant += ` "` + accountName(self.User.Sid.String()) + `:R"`
	}
	return fmt.Errorf("%s: %s can be read by %s, not only by SYSTEM, Administrators and this agent's account: "+
		`restrict it: icacls "%s" /inheritance:r /grant:r %s, and make its owner one of them (icacls "%s" /setowner Administrators)`,
		setting, path, strings.Join(names, ", "), path, grant, path)
}

// accountName is DOMAIN\name of a SID, or the SID itself when it does not resolve.
func accountName(sid string) string {
	s, err := windows.StringToSid(sid)
	if err != nil {
		return sid
	}
	name, domain, _, err := s.LookupAccount("")
	if err != nil {
		return sid
	}
	if domain == "" {
		return name
	}
	return domain + `\` + name
}
