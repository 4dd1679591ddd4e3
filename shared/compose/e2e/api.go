package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/kiln"
)

func OrgOf(t testing.TB, ts *Server) string {
	t.Helper()
	return Field(t, ts.Do(t, "GET", "/auth/me", ts.Token, nil).Body, "organization", "id")
}

func AddUser(t *testing.T, ts *Server, orgID, role string) string {
	t.Helper()
	if ts.AWS != nil { // kiln aws-local: the member goes into its DynamoDB table, as the admin Lambda adds one
		created, err := accounts.AddMember(context.Background(), ts.AWS.Store(), orgID,
			fmt.Sprintf("%s-%d@studio.example", role, time.Now().UnixNano()), "User", kiln.Role(role), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return created.Token
	}
	var out strings.Builder
	if err := serve.AdminAddUser(context.Background(), ts.Config.Data, orgID, fmt.Sprintf("%s-%d@studio.example", role, time.Now().UnixNano()), "User", role, &out); err != nil {
		t.Fatal(err)
	}
	return TokenRe.FindString(out.String())
}
