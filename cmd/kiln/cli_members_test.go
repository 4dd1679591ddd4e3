package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/serve"
)

// TestCLIMembers: kiln members list, role (by email), remove and leave, against kiln serve.
func TestCLIMembers(t *testing.T) {
	ps := startPlainService(t)
	data, owner, envOf := ps.data, ps.owner, ps.envOf
	tokenRe := regexp.MustCompile(`kiln_[0-9A-Za-z]{40}`)
	// Add an artist through kiln admin, as an operator does.
	usage, _, _, _ := runKiln(t, envOf(owner), "usage", "--json")
	orgID := regexp.MustCompile(`"organizationId":"([^"]+)"`).FindStringSubmatch(usage)
	if orgID == nil {
		t.Fatalf("usage --json has no organizationId: %s", usage)
	}
	var added strings.Builder
	if err := serve.AdminAddUser(context.Background(), data, orgID[1], "Artist@Studio.example", "Artist", "viewer", &added); err != nil {
		t.Fatal(err)
	}
	artist := tokenRe.FindString(added.String())

	list, _, code, err := runKiln(t, envOf(owner), "members", "list")
	if code != 0 || !strings.HasPrefix(list, "ID  ") || !strings.Contains(list, "Artist@Studio.example") || !strings.Contains(list, "viewer") {
		t.Fatalf("members list: exit %d (%v)\n%s", code, err, list)
	}
	for _, tc := range []struct {
		name  string
		token string
		args  []string
		code  int
		want  string
	}{
		{"artist may not manage", artist, []string{"members", "role", "artist@studio.example", "admin"}, 2, "insufficient_scope"},
		{"unknown member", owner, []string{"members", "role", "nobody@studio.example", "admin"}, 2, `no member has the id or email "nobody@studio.example"`},
		{"bad role", owner, []string{"members", "role", "artist@studio.example", "boss"}, 2, "validation_failed"},
		{"missing role", owner, []string{"members", "role", "artist@studio.example"}, 2, "missing ROLE"},
		{"promote by email, any case", owner, []string{"members", "role", "ARTIST@studio.example", "member"}, 0, "Artist <Artist@Studio.example> is now member"},
		{"last owner cannot leave", owner, []string{"members", "leave"}, 2, "invalid_state"},
		{"remove", owner, []string{"members", "remove", "artist@studio.example"}, 0, "removed artist@studio.example from"},
		{"removed token", artist, []string{"members", "list"}, 2, "invalid_token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code, err := runKiln(t, envOf(tc.token), tc.args...)
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
