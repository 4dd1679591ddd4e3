package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestCLIInvitations: kiln invitations create prints the link once, list shows the pending
// invitation without it, revoke ends it; refusals exit 2 with the API's error.
func TestCLIInvitations(t *testing.T) {
	ps := startPlainService(t)
	env := ps.envOf(ps.owner)
	created, _, code, err := runKiln(t, env, "invitations", "create", "dev@studio.example", "admin")
	link := regexp.MustCompile(`(?m)^http://\S+/console/invitations/accept#kinv_[0-9A-Za-z]{40}$`).FindString(created)
	if code != 0 || link == "" || !strings.Contains(created, "invited dev@studio.example to") || !strings.Contains(created, "pass them this link") {
		t.Fatalf("invitations create: exit %d (%v)\n%s", code, err, created)
	}
	list, _, code, err := runKiln(t, env, "invitations", "list")
	id := regexp.MustCompile(`(?m)^([-0-9A-Za-z_]{24})\s+dev@studio\.example\s+admin\s`).FindStringSubmatch(list)
	if code != 0 || !strings.HasPrefix(list, "ID  ") || id == nil || strings.Contains(list, "kinv_") {
		t.Fatalf("invitations list: exit %d (%v)\n%s", code, err, list)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"bad role", []string{"invitations", "create", "x@studio.example", "boss"}, 2, "validation_failed"},
		{"missing role", []string{"invitations", "create", "x@studio.example"}, 2, "missing ROLE"},
		{"revoke", []string{"invitations", "revoke", id[1]}, 0, "revoked invitation " + id[1]},
		{"revoke again", []string{"invitations", "revoke", id[1]}, 2, "not_found"},
		{"none left", []string{"invitations", "list", "--json"}, 0, "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code, err := runKiln(t, env, tc.args...)
			got := out + errOut
			if err != nil {
				got += errorLine(err)
			}
			if code != tc.code || !strings.Contains(got, tc.want) {
				t.Fatalf("kiln %s: exit %d, output %q; want exit %d with %q", strings.Join(tc.args, " "), code, got, tc.code, tc.want)
			}
		})
	}
}
