package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/awslocal/dynamodblocal/dynamodblocaltest"
	"github.com/kilnbuild/kiln/shared/compose/awsapp"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

func TestMain(m *testing.M) { os.Exit(dynamodblocaltest.Main(m)) }

// sample reads an admin event from events/, with the test's ids in place, decoded strictly into
// the handler's input type.
func sample(t *testing.T, name, orgID string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("../../events", name))
	if err != nil {
		t.Fatal(err)
	}
	raw = bytes.ReplaceAll(raw, []byte("ORGANIZATIONIDREPLACEDBYTEST"), []byte(orgID))
	var req awsapp.AdminRequest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		t.Fatalf("%s is not an awsapp.AdminRequest: %v", name, err)
	}
	return raw
}

// TestSampleEventsOnDynamoDB feeds the admin samples to the handler, as `aws lambda invoke` does,
// against DynamoDB Local: bootstrap makes the organization (enterprise by default) and owner
// whose token works, a second bootstrap is refused and makes nothing, user and token answer what
// kiln admin prints, and plan sets the plan and an enterprise organization's concurrency.
func TestSampleEventsOnDynamoDB(t *testing.T) {
	files, _ := filepath.Glob("../../events/admin-*.json")
	if len(files) != 4 {
		t.Fatalf("events/ holds %d admin events, the test knows 4: add the new ones here", len(files))
	}
	_, st := dynamodblocaltest.NewTable(t)
	ctx := context.Background()
	h := lambda.NewHandler((&awsapp.Admin{Store: st}).Handle)
	invoke := func(raw []byte) (map[string]any, error) {
		out, err := h.Invoke(ctx, raw)
		if err != nil {
			return nil, err
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("the handler answered %s", out)
		}
		return got, nil
	}

	boot, err := invoke(sample(t, "admin-bootstrap.json", ""))
	if err != nil || len(boot) != 3 || boot["token"] == "" {
		t.Fatalf("bootstrap: %v %v", boot, err)
	}
	tok, err := st.GetTokenByHash(ctx, auth.HashToken(boot["token"].(string)))
	if err != nil || tok.OrganizationID != boot["organizationId"] || tok.UserID != boot["userId"] {
		t.Fatalf("the token is not the owner's: %+v %v", tok, err)
	}
	orgID := boot["organizationId"].(string)
	if org, err := st.GetOrganization(ctx, orgID); err != nil || org.Plan != kiln.PlanEnterprise {
		t.Fatalf("the bootstrapped organization: %+v %v; want plan enterprise", org, err)
	}
	m, err := st.GetMember(ctx, orgID, boot["userId"].(string))
	if err != nil || m.Role != kiln.RoleOwner || m.User.Email != "owner@studio.example" {
		t.Fatalf("owner: %+v %v", m, err)
	}

	again := sample(t, "admin-bootstrap.json", "")
	again = bytes.Replace(again, []byte(`"Studio"`), []byte(`"Second"`), 1)
	if _, err := invoke(again); err == nil || !strings.Contains(err.Error(), "bootstrapped already") {
		t.Fatalf("a second bootstrap: %v, want it refused", err)
	}

	user, err := invoke(sample(t, "admin-user.json", orgID))
	if err != nil || len(user) != 2 || user["token"] == "" {
		t.Fatalf("user: %v %v", user, err)
	}
	lost, err := invoke(sample(t, "admin-token.json", orgID))
	if err != nil || lost["userId"] != boot["userId"] || lost["organizationId"] != boot["organizationId"] || lost["token"] == boot["token"] {
		t.Fatalf("token: %v %v", lost, err)
	}
	members, _, err := st.ListMembers(ctx, orgID, store.Page{})
	if err != nil || len(members) != 2 {
		t.Fatalf("members: %d %v; want the owner and the user", len(members), err)
	}

	plan, err := invoke(sample(t, "admin-plan.json", orgID))
	if err != nil || plan["plan"] != "enterprise" || plan["maxConcurrentBuilds"] != float64(4) || plan["organizationId"] != orgID {
		t.Fatalf("plan: %v %v", plan, err)
	}
	if org, err := st.GetOrganization(ctx, orgID); err != nil || org.Plan != kiln.PlanEnterprise || org.MaxConcurrentBuilds != 4 {
		t.Fatalf("after plan: %+v %v", org, err)
	}
	// Bad input changes nothing: a concurrency value is enterprise's only, and plans are named.
	for _, bad := range [][2]string{{`"plan": "enterprise"`, `"plan": "free"`}, {`"plan": "enterprise"`, `"plan": "gold"`}} {
		raw := bytes.Replace(sample(t, "admin-plan.json", orgID), []byte(bad[0]), []byte(bad[1]), 1)
		if _, err := invoke(raw); err == nil {
			t.Errorf("plan with %s: accepted", bad[1])
		}
	}
	if org, err := st.GetOrganization(ctx, orgID); err != nil || org.Plan != kiln.PlanEnterprise || org.MaxConcurrentBuilds != 4 {
		t.Fatalf("after refused plan changes: %+v %v", org, err)
	}
}
