package main

import "slices"

// Well-known SIDs a secret file's ACL may name.
const (
	sidSystem         = "S-1-5-18"
	sidAdministrators = "S-1-5-32-544"
	sidCreatorOwner   = "S-1-3-0"
	sidOwnerRights    = "S-1-3-4"
)

// aclEntry is one entry of a file's DACL, as secretReaders sees it.
type aclEntry struct {
	SID         string
	Deny        bool
	Mask        uint32
	InheritOnly bool // applies to what is created under a directory, not to the object itself
}

// secretReadRights are the rights that read a file, or let an account give itself read access:
// FILE_READ_DATA, GENERIC_READ, GENERIC_ALL, WRITE_DAC and WRITE_OWNER.
const secretReadRights = 0x1 | 0x80000000 | 0x10000000 | 0x40000 | 0x80000

// secretReaders are the accounts, other than allowed, that a file's security descriptor lets
// read it: an entry that allows one of secretReadRights, and the owner unless it is allowed (an
// owner may always change the DACL, unless OWNER RIGHTS says otherwise; that case is refused too,
// which only errs on the safe side). A missing or NULL DACL lets everyone ("S-1-1-0") read it.
// Deny entries are not subtracted: a file readable only because a deny entry comes first is
// refused; its owner can restrict it with icacls as kiln says.
func secretReaders(owner string, entries []aclEntry, nullDACL bool, allowed []string) []string {
	if nullDACL {
		return []string{"S-1-1-0"}
	}
	var out []string
	add := func(sid string) {
		if !slices.Contains(allowed, sid) && !slices.Contains(out, sid) {
			out = append(out, sid)
		}
	}
	if owner != "" {
		add(owner)
	}
	for _, e := range entries {
		if e.Deny || e.InheritOnly || e.Mask&secretReadRights == 0 {
			continue
		}
		switch e.SID {
		case sidCreatorOwner: // a template for what is created below; inherit-only in practice
			continue
		case sidOwnerRights:
			add(owner)
			continue
		}
		add(e.SID)
	}
	return out
}
