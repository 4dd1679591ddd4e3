package main

import (
	"slices"
	"testing"
)

// TestSecretReaders: a Windows token file may be readable by SYSTEM, Administrators and the
// agent's own account only; any other account that an entry lets read it, change its permissions
// or own it is named, and so is everyone for a file without a DACL.
func TestSecretReaders(t *testing.T) {
	const (
		self     = "S-1-5-21-1-2-3-1001" // the agent's account
		build    = "S-1-5-21-1-2-3-1002" // kiln-build
		users    = "S-1-5-32-545"
		everyone = "S-1-1-0"
		readData = 0x1
		fullFile = 0x1f01ff
		writeDAC = 0x40000
		execOnly = 0x20 // FILE_EXECUTE
		genRead  = 0x80000000
	)
	allowed := []string{sidSystem, sidAdministrators, self}
	for _, tc := range []struct {
		name     string
		owner    string
		entries  []aclEntry
		nullDACL bool
		want     []string
	}{
		{name: "system, administrators and the agent", owner: sidAdministrators,
			entries: []aclEntry{{SID: sidSystem, Mask: fullFile}, {SID: sidAdministrators, Mask: fullFile}, {SID: self, Mask: readData}}},
		{name: "owned by the agent", owner: self, entries: []aclEntry{{SID: self, Mask: fullFile}}},
		{name: "inherited users read", owner: sidAdministrators,
			entries: []aclEntry{{SID: sidSystem, Mask: fullFile}, {SID: users, Mask: 0x1200a9}}, want: []string{users}},
		{name: "the build account reads", owner: sidAdministrators, entries: []aclEntry{{SID: build, Mask: readData}}, want: []string{build}},
		{name: "generic read", owner: sidAdministrators, entries: []aclEntry{{SID: everyone, Mask: genRead}}, want: []string{everyone}},
		{name: "may change its permissions", owner: sidAdministrators, entries: []aclEntry{{SID: build, Mask: writeDAC}}, want: []string{build}},
		{name: "execute only is no read", owner: sidAdministrators, entries: []aclEntry{{SID: users, Mask: execOnly}}},
		{name: "inherit-only entry does not apply", owner: sidAdministrators,
			entries: []aclEntry{{SID: users, Mask: fullFile, InheritOnly: true}, {SID: sidCreatorOwner, Mask: fullFile}}},
		{name: "deny entries are not trusted away", owner: sidAdministrators,
			entries: []aclEntry{{SID: build, Deny: true, Mask: fullFile}, {SID: users, Mask: readData}}, want: []string{users}},
		{name: "another owner", owner: build, entries: []aclEntry{{SID: sidSystem, Mask: fullFile}}, want: []string{build}},
		{name: "owner rights of another owner", owner: build, entries: []aclEntry{{SID: sidOwnerRights, Mask: readData}}, want: []string{build}},
		{name: "owner rights of the agent", owner: self, entries: []aclEntry{{SID: sidOwnerRights, Mask: fullFile}}},
		{name: "no DACL", owner: self, nullDACL: true, want: []string{everyone}},
		{name: "one name once", owner: sidAdministrators,
			entries: []aclEntry{{SID: users, Mask: readData}, {SID: users, Mask: genRead}}, want: []string{users}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := secretReaders(tc.owner, tc.entries, tc.nullDACL, allowed)
			if !slices.Equal(got, tc.want) {
				t.Errorf("readers = %q, want %q", got, tc.want)
			}
		})
	}
}
