package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// TestSecretFileACLWindows: a token file that only SYSTEM, Administrators and this account can
// read is read; one that Users (and so a build account) can read is refused with the icacls fix.
func TestSecretFileACLWindows(t *testing.T) {
	self, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		t.Fatal(err)
	}
	me := self.User.Sid.String()
	dir := t.TempDir()
	for _, tc := range []struct {
		name, sddl, wantErr string
	}{
		{name: "agent only", sddl: "O:" + me + "D:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;FR;;;" + me + ")"},
		{name: "users read", sddl: "O:" + me + "D:P(A;;FA;;;SY)(A;;FA;;;" + me + ")(A;;FR;;;BU)", wantErr: "icacls"},
		{name: "everyone", sddl: "O:" + me + "D:P(A;;FA;;;" + me + ")(A;;GR;;;WD)", wantErr: "can be read by"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			if err := os.WriteFile(p, []byte("kagent_acl\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			sd, err := windows.SecurityDescriptorFromString(tc.sddl)
			if err != nil {
				t.Fatal(err)
			}
			dacl, _, err := sd.DACL()
			if err != nil {
				t.Fatal(err)
			}
			if err := windows.SetNamedSecurityInfo(p, windows.SE_FILE_OBJECT,
				windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil); err != nil {
				t.Fatal(err)
			}
			got, err := secretSetting("", p, "KILN_AGENT_TOKEN", "KILN_AGENT_TOKEN_FILE", strings.NewReader(""))
			if tc.wantErr == "" {
				if err != nil || got != "kagent_acl" {
					t.Fatalf("got %q, %v", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "kagent_") {
				t.Fatalf("got %q, err %v; want an error saying %q (and not the secret)", got, err, tc.wantErr)
			}
		})
	}
}
