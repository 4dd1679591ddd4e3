package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/awslocal/dynamodblocal/dynamodblocaltest"
)

// The package's tests run with DynamoDB Local, for kiln admin --dynamodb-table. Run with
// runAsKiln set, the test binary is kiln itself (main), for the tests that need a kiln process.
func TestMain(m *testing.M) {
	if os.Getenv(runAsKiln) == "1" {
		main()
	}
	os.Exit(dynamodblocaltest.Main(m))
}

// TestAdminOnDynamoDB: kiln admin --dynamodb-table bootstraps the first organization on the AWS
// deployment's table (endpoint from the AWS SDK's environment), refuses a second bootstrap
// unless forced, and adds members and tokens there, printing what kiln admin prints.
func TestAdminOnDynamoDB(t *testing.T) {
	table, st := dynamodblocaltest.NewTable(t)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", dynamodblocaltest.LoopbackURL(t))
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "kiln")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "kiln")
	ctx := context.Background()
	admin := func(args ...string) (map[string]string, error) {
		var out, errOut bytes.Buffer
		err := run(ctx, append(append([]string{"admin"}, args...), "--dynamodb-table", table), noEnv, &out, &errOut)
		if err != nil {
			return nil, err
		}
		var got map[string]string
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("kiln admin %v printed %q", args, out.String())
		}
		return got, nil
	}
	boot, err := admin("bootstrap", "--org", "Studio", "--email", "lead@studio.example", "--name", "Lead")
	if err != nil || boot["token"] == "" || boot["organizationId"] == "" || boot["userId"] == "" || len(boot) != 3 {
		t.Fatalf("bootstrap: %v %v", boot, err)
	}
	tok, err := st.GetTokenByHash(ctx, auth.HashToken(boot["token"]))
	if err != nil || tok.OrganizationID != boot["organizationId"] || tok.UserID != boot["userId"] {
		t.Fatalf("the printed token is not in the table: %+v %v", tok, err)
	}
	if _, err := admin("bootstrap", "--org", "Other", "--email", "x@other.example", "--name", "X"); err == nil || !strings.Contains(err.Error(), "bootstrapped already") {
		t.Fatalf("a second bootstrap: %v, want it refused", err)
	}
	forced, err := admin("bootstrap", "--org", "Other", "--email", "x@other.example", "--name", "X", "--force")
	if err != nil || forced["organizationId"] == boot["organizationId"] {
		t.Fatalf("a forced bootstrap: %v %v", forced, err)
	}
	user, err := admin("user", "--org-id", boot["organizationId"], "--email", "dev@studio.example", "--name", "Dev", "--role", "viewer")
	if err != nil || user["token"] == "" || user["userId"] == "" || len(user) != 2 {
		t.Fatalf("user: %v %v", user, err)
	}
	lost, err := admin("token", "--org-id", boot["organizationId"], "--email", "LEAD@studio.example")
	if err != nil || lost["token"] == boot["token"] || lost["userId"] != boot["userId"] {
		t.Fatalf("token: %v %v", lost, err)
	}
	if _, err := admin("token", "--email", "lead@studio.example"); err == nil || !strings.Contains(err.Error(), "--org-id") {
		t.Fatalf("token without --org-id: %v", err)
	}
}
