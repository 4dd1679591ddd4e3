package awslocal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestAdminThroughTheLambdaInvokeAPI: the admin function invoked with the AWS SDK's Lambda client
// and the sample events of events/ does on kiln aws-local what it does on AWS: bootstrap an
// organization whose owner's token works, refuse a second bootstrap as a function error
// (Unhandled, aws-lambda-go's error JSON) unless forced, add a member, set a plan and recover a
// lost token; every function of functions/ answers, an unknown one is ResourceNotFoundException.
func TestAdminThroughTheLambdaInvokeAPI(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.AWSLocal)
	c := e2e.AWSLocalLambdaClient(w.Server)
	ctx := context.Background()
	invoke := func(function string, payload []byte) (map[string]any, *lambdaFunctionError) {
		t.Helper()
		out, err := c.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String(function), Payload: payload})
		if err != nil {
			t.Fatalf("invoke %s: %v", function, err)
		}
		if out.StatusCode != 200 {
			t.Fatalf("invoke %s: status %d", function, out.StatusCode)
		}
		if out.FunctionError != nil {
			var fe lambdaFunctionError
			if aws.ToString(out.FunctionError) != "Unhandled" || json.Unmarshal(out.Payload, &fe) != nil || fe.ErrorMessage == "" || fe.ErrorType == "" {
				t.Fatalf("invoke %s: function error %q with %s", function, aws.ToString(out.FunctionError), out.Payload)
			}
			return nil, &fe
		}
		var got map[string]any
		if err := json.Unmarshal(out.Payload, &got); err != nil {
			t.Fatalf("invoke %s answered %s", function, out.Payload)
		}
		return got, nil
	}
	event := func(name, orgID string) []byte {
		raw, err := os.ReadFile(e2e.RepoPath("events", name))
		if err != nil {
			t.Fatal(err)
		}
		return bytes.ReplaceAll(raw, []byte("ORGANIZATIONIDREPLACEDBYTEST"), []byte(orgID))
	}
	ownerOf := func(token, orgID string) {
		t.Helper()
		if r := w.Do(t, "GET", "/organizations/"+orgID, token, nil); r.Status != 200 {
			t.Fatalf("GET the organization with its new token: %d %s", r.Status, r.Raw)
		}
	}

	boot, fe := invoke("admin", event("admin-bootstrap.json", ""))
	if fe != nil || len(boot) != 3 || boot["token"] == "" || boot["organizationId"] == w.OrgID {
		t.Fatalf("bootstrap: %v %+v", boot, fe)
	}
	orgID := boot["organizationId"].(string)
	ownerOf(boot["token"].(string), orgID)

	if _, fe := invoke("admin", event("admin-bootstrap.json", "")); fe == nil || !strings.Contains(fe.ErrorMessage, "bootstrapped already") {
		t.Fatalf("a second bootstrap: %+v, want the function error that refuses it", fe)
	}
	forced := bytes.Replace(event("admin-bootstrap.json", ""), []byte(`"command": "bootstrap",`), []byte(`"command": "bootstrap", "force": true,`), 1)
	other, fe := invoke("admin", forced)
	if fe != nil || other["organizationId"] == orgID || other["organizationId"] == "" {
		t.Fatalf("a forced bootstrap: %v %+v, want another organization", other, fe)
	}
	ownerOf(other["token"].(string), other["organizationId"].(string))

	user, fe := invoke("admin", event("admin-user.json", orgID))
	if fe != nil || user["token"] == "" {
		t.Fatalf("user: %v %+v", user, fe)
	}
	if r := w.Do(t, "GET", "/auth/me", user["token"].(string), nil); r.Status != 200 || !strings.Contains(r.Raw, `"membership":{"role":"member"}`) {
		t.Fatalf("the member's token: %d %s", r.Status, r.Raw)
	}
	plan, fe := invoke("admin", event("admin-plan.json", orgID))
	if fe != nil || plan["plan"] != "enterprise" || plan["maxConcurrentBuilds"] != float64(4) {
		t.Fatalf("plan: %v %+v", plan, fe)
	}
	lost, fe := invoke("admin", event("admin-token.json", orgID))
	if fe != nil || lost["userId"] != boot["userId"] || lost["token"] == boot["token"] {
		t.Fatalf("token: %v %+v", lost, fe)
	}
	ownerOf(lost["token"].(string), orgID)

	// The API function through the Invoke API, with API Gateway's event.
	me := bytes.Replace(event("api-get-auth-me.json", ""), []byte("kiln_REPLACEDBYTHETESTWITHAREALTOKEN0000000"), []byte(lost["token"].(string)), 1)
	resp, fe := invoke("api", me)
	if fe != nil || resp["statusCode"] != float64(200) || !strings.Contains(resp["body"].(string), `"role":"owner"`) {
		t.Fatalf("api with events/api-get-auth-me.json: %v %+v", resp, fe)
	}

	dirs, err := os.ReadDir(e2e.RepoPath("functions"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("functions/: %v", err)
	}
	for _, d := range dirs {
		out, err := c.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String(d.Name()), InvocationType: lambdatypes.InvocationTypeDryRun})
		if err != nil || out.StatusCode != 204 {
			t.Errorf("functions/%s is not served: %v", d.Name(), err)
		}
	}
	var notFound *lambdatypes.ResourceNotFoundException
	if _, err := c.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("nope")}); !errors.As(err, &notFound) {
		t.Fatalf("an unknown function: %v, want ResourceNotFoundException", err)
	}
}

// lambdaFunctionError is Lambda's answer of a failed function.
type lambdaFunctionError struct {
	ErrorMessage string `json:"errorMessage"`
	ErrorType    string `json:"errorType"`
}

// TestPerforceBuildToAnArtifact: on kiln aws-local, with KILN_P4 and KILN_OUTBOUND_ALLOW as kiln serve
// takes them, an organization saves Perforce credentials (checked by the API), adds a stream
// project, and a build on a CodeBuild host syncs the latest submitted changelist, then an older
// one on request, each into its artifact. As root, aws-local runs the hosts as the buildspec's
// run-as user: the host's p4 syncs ran as a uid of its own, not root.
func TestPerforceBuildToAnArtifact(t *testing.T) {
	t.Parallel()
	w := e2e.NewPerforceWorld(t, e2e.AWSLocal)
	for _, c := range []struct{ body, changelist, version string }{{"", "11", "cl-11\n"}, {`{"changelist": "10"}`, "10", "cl-10\n"}} {
		id := w.Trigger(t, w.ProjectID, w.SettingID, c.body)
		b := w.WaitEnded(t, id)
		if b["status"] != "complete" || b["changelist"] != c.changelist || b["branch"] != "//game/main" {
			t.Fatalf("build of changelist %s: %v", c.changelist, b)
		}
		if v := w.ArtifactVersion(t, id); v != c.version {
			t.Fatalf("the artifact of changelist %s holds Version.txt %q", c.changelist, v)
		}
	}
	if os.Geteuid() != 0 {
		return
	}
	data, err := os.ReadFile(w.P4 + ".log")
	if err != nil {
		t.Fatal(err)
	}
	syncs := 0
	for line := range strings.Lines(string(data)) {
		var l struct {
			Argv []string `json:"argv"`
			UID  int      `json:"uid"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(l.Argv, "sync") {
			syncs++
			if r := w.Config.BuildUIDs; l.UID < r.First || l.UID > r.Last {
				t.Errorf("a host's p4 sync ran as uid %d, want a build uid (the buildspec's run-as)", l.UID)
			}
		}
	}
	if syncs < 2 {
		t.Errorf("the fake p4 logged %d syncs, want one per build:\n%s", syncs, data)
	}
}
