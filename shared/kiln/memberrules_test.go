package kiln

import "testing"

func TestMayChangeMember(t *testing.T) {
	for _, tc := range []struct {
		actor, target, to Role
		want              string // the error code, "" for allowed
	}{
		{RoleOwner, RoleMember, RoleAdmin, ""},
		{RoleOwner, RoleAdmin, RoleOwner, ""},
		{RoleOwner, RoleOwner, RoleViewer, ""},
		{RoleOwner, RoleOwner, "", ""},
		{RoleAdmin, RoleMember, RoleAdmin, ""},
		{RoleAdmin, RoleViewer, "", ""},
		{RoleAdmin, RoleAdmin, RoleMember, ""},
		{RoleAdmin, RoleMember, RoleOwner, EInsufficientScope},
		{RoleAdmin, RoleOwner, RoleAdmin, EInsufficientScope},
		{RoleAdmin, RoleOwner, "", EInsufficientScope},
		{RoleMember, RoleViewer, RoleMember, EInsufficientScope},
		{RoleMember, RoleViewer, "", EInsufficientScope},
		{RoleViewer, RoleViewer, RoleMember, EInsufficientScope},
		{RoleOwner, RoleMember, "boss", EValidation},
	} {
		err := MayChangeMember(tc.actor, tc.target, tc.to)
		if tc.want == "" && err != nil || tc.want != "" && !IsCode(err, tc.want) {
			t.Errorf("%s changes %s to %q: %v, want %q", tc.actor, tc.target, tc.to, err, tc.want)
		}
	}
}
