package iam

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

var testNames = Names{Region: "us-east-1", Account: "000000000000", Table: "kiln", Bucket: "kiln-artifacts", Queue: "kiln-deliveries",
	StateMachine: "kiln-builds", HostProject: "kiln-hosts"}

func testAuthorizer(t *testing.T) *Authorizer {
	t.Helper()
	data, err := os.ReadFile("testdata/stack.template.json")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := ParseTemplate(data, testNames)
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAuthorizer(tmpl, func(p string) string { return "KEY-" + p }, func(p string) string { return p }, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestMatch(t *testing.T) {
	for _, tt := range []struct {
		p, v string
		want bool
	}{
		{"*", "anything", true},
		{"arn:aws:s3:::b/artifacts/*", "arn:aws:s3:::b/artifacts/o/1.tar.gz", true},
		{"arn:aws:s3:::b/artifacts/*", "arn:aws:s3:::b/other/1", false},
		{"codebuild:Batch*", "codebuild:BatchGetBuilds", true},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"arn:*:states:*:*:execution:kiln-builds:*", "arn:aws:states:us-east-1:0:execution:kiln-builds:b1", true},
		{"exact", "exact", true},
		{"exact", "exactly", false},
	} {
		if got := Match(tt.p, tt.v); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.p, tt.v, got, tt.want)
		}
	}
}

func TestAuthorize(t *testing.T) {
	a := testAuthorizer(t)
	const table = "arn:aws:dynamodb:us-east-1:000000000000:table/kiln"
	for _, tt := range []struct {
		name, principal string
		call            Call
		wantErr         string // "" allowed; else a part of the AccessDenied message
	}{
		{"table action", "schedule", Call{Action: "dynamodb:GetItem", Resource: table}, ""},
		{"action case-insensitive", "schedule", Call{Action: "DynamoDB:getitem", Resource: table}, ""},
		{"index of the table", "schedule", Call{Action: "dynamodb:Query", Resource: table + "/index/byStatus"}, ""},
		{"action not granted", "schedule", Call{Action: "dynamodb:DeleteItem", Resource: table}, "because no identity-based policy allows the dynamodb:DeleteItem action"},
		{"another table", "schedule", Call{Action: "dynamodb:GetItem", Resource: "arn:aws:dynamodb:us-east-1:000000000000:table/other"}, "not authorized"},
		{"object under the prefix", "schedule", Call{Action: "s3:DeleteObject", Resource: "arn:aws:s3:::kiln-artifacts/artifacts/o/b.tar.gz"}, ""},
		{"explicit deny wins", "schedule", Call{Action: "s3:DeleteObject", Resource: "arn:aws:s3:::kiln-artifacts/artifacts/keep/b"}, "with an explicit deny"},
		{"joined execution ARN", "schedule", Call{Action: "states:StopExecution", Resource: "arn:aws:states:us-east-1:000000000000:execution:kiln-builds:b1"}, ""},
		{"no StartExecution", "schedule", Call{Action: "states:StartExecution", Resource: "arn:aws:states:us-east-1:000000000000:stateMachine:kiln-builds"},
			"User: arn:aws:sts::000000000000:assumed-role/ScheduleFunctionRole25F55115/schedule is not authorized to perform: states:StartExecution on resource: arn:aws:states:us-east-1:000000000000:stateMachine:kiln-builds"},
		{"queue by env", "schedule", Call{Action: "sqs:SendMessage", Resource: "arn:aws:sqs:us-east-1:000000000000:kiln-deliveries"}, ""},
		{"action wildcard", "schedule", Call{Action: "codebuild:BatchGetBuilds", Resource: "arn:aws:codebuild:us-east-1:000000000000:project/kiln-hosts"}, ""},
		{"condition holds", "schedule", Call{Action: "cloudwatch:PutMetricData", Resource: "*", Context: map[string]string{"cloudwatch:namespace": "kiln"}}, ""},
		{"condition fails", "schedule", Call{Action: "cloudwatch:PutMetricData", Resource: "*", Context: map[string]string{"cloudwatch:namespace": "other"}}, "not authorized"},
		{"startBuild.sync needs the managed rule", StateMachinePrincipal, Call{Action: "codebuild:StartBuild", Resource: "arn:aws:codebuild:us-east-1:000000000000:project/kiln-hosts"},
			"events:PutTargets on resource: arn:aws:events:us-east-1:000000000000:rule/StepFunctionsGetEventForCodeBuildStartBuildRule"},
		{"managed policy outside the template grants nothing", CodeBuildPrincipal, Call{Action: "s3:GetObject", Resource: "arn:aws:s3:::kiln-artifacts/x"}, "not authorized"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := a.Authorize("KEY-"+tt.principal, tt.call)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("want allowed, got %v", err)
				}
				return
			}
			var denied *AccessDenied
			if !errors.As(err, &denied) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("want AccessDenied containing %q, got %v", tt.wantErr, err)
			}
		})
	}
	var unknown *UnknownKey
	if err := a.Authorize("KEY-nobody", Call{Action: "s3:GetObject", Resource: "*"}); !errors.As(err, &unknown) {
		t.Fatalf("unknown key: got %v", err)
	}
}

func TestResolveIntrinsics(t *testing.T) {
	tmpl, err := ParseTemplate([]byte(`{"Resources":{"T":{"Type":"AWS::DynamoDB::Table"},"F1":{"Type":"AWS::Lambda::Function","Properties":{"Environment":{"Variables":{"KILN_DYNAMODB_TABLE":{"Ref":"T"}}}}}}}`), testNames)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		in   any
		want any
	}{
		{map[string]any{"Ref": "T"}, "kiln"},
		{map[string]any{"Fn::GetAtt": []any{"T", "Arn"}}, "arn:aws:dynamodb:us-east-1:000000000000:table/kiln"},
		{map[string]any{"Fn::GetAtt": "T.Arn"}, "arn:aws:dynamodb:us-east-1:000000000000:table/kiln"},
		{map[string]any{"Fn::Sub": "${T.Arn}/index/*"}, "arn:aws:dynamodb:us-east-1:000000000000:table/kiln/index/*"},
		{map[string]any{"Fn::Sub": []any{"${X}-${!Literal}", map[string]any{"X": map[string]any{"Ref": "AWS::Region"}}}}, "us-east-1-${Literal}"},
		{map[string]any{"Fn::Select": []any{float64(1), map[string]any{"Fn::Split": []any{"/", "a/b/c"}}}}, "b"},
		{map[string]any{"Fn::Join": []any{":", []any{"a", map[string]any{"Ref": "AWS::AccountId"}}}}, "a:000000000000"},
	} {
		got, err := tmpl.Resolve(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Resolve(%v) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	if _, err := tmpl.Resolve(map[string]any{"Ref": "Missing"}); err == nil {
		t.Error("a Ref of no resource resolved")
	}
}

func TestRequestCalls(t *testing.T) {
	arns := ARNs{Region: "us-east-1", Account: "000000000000"}
	req := func(method, url, target, body string) *http.Request {
		r := httptest.NewRequest(method, url, strings.NewReader(body))
		if target != "" {
			r.Header.Set("X-Amz-Target", target)
		}
		return r
	}
	for _, tt := range []struct {
		name    string
		service Service
		r       *http.Request
		body    string
		want    []string // action resource
	}{
		{"dynamodb query on an index", DynamoDB{arns}, req("POST", "/", "DynamoDB_20120810.Query", ""), `{"TableName":"kiln","IndexName":"gsi1"}`,
			[]string{"dynamodb:Query arn:aws:dynamodb:us-east-1:000000000000:table/kiln/index/gsi1"}},
		{"dynamodb transaction", DynamoDB{arns}, req("POST", "/", "DynamoDB_20120810.TransactWriteItems", ""),
			`{"TransactItems":[{"Put":{"TableName":"kiln"}},{"ConditionCheck":{"TableName":"kiln"}}]}`,
			[]string{"dynamodb:PutItem arn:aws:dynamodb:us-east-1:000000000000:table/kiln", "dynamodb:ConditionCheckItem arn:aws:dynamodb:us-east-1:000000000000:table/kiln"}},
		{"start execution", StepFunctions{"arn:aws:states:us-east-1:000000000000:stateMachine:m"}, req("POST", "/", "AWSStepFunctions.StartExecution", ""),
			`{"stateMachineArn":"arn:aws:states:us-east-1:000000000000:stateMachine:m","name":"b"}`, []string{"states:StartExecution arn:aws:states:us-east-1:000000000000:stateMachine:m"}},
		{"codebuild stop", CodeBuild{arns}, req("POST", "/", "CodeBuild_20161006.StopBuild", ""), `{"id":"kiln-hosts:abc"}`,
			[]string{"codebuild:StopBuild arn:aws:codebuild:us-east-1:000000000000:project/kiln-hosts"}},
		{"sqs send", SQS{arns}, req("POST", "/", "AmazonSQS.SendMessage", ""), `{"QueueUrl":"http://127.0.0.1:1/000000000000/kiln-deliveries"}`,
			[]string{"sqs:SendMessage arn:aws:sqs:us-east-1:000000000000:kiln-deliveries"}},
		{"lambda invoke by ARN", Lambda{arns}, req("POST", "/2015-03-31/functions/arn%3Aaws%3Alambda%3Aus-east-1%3A000000000000%3Afunction%3Atask/invocations", "", ""), "",
			[]string{"lambda:InvokeFunction arn:aws:lambda:us-east-1:000000000000:function:task"}},
		{"post to a connection", ManageConnections{ARNs: arns, APIID: "abc123"}, req("POST", "/live/@connections/L0SM9cOFvHcCIhw%3D", "", ""), "x",
			[]string{"execute-api:ManageConnections arn:aws:execute-api:us-east-1:000000000000:abc123/live/POST/@connections/L0SM9cOFvHcCIhw="}},
		{"delete a connection, @ encoded", ManageConnections{ARNs: arns, APIID: "abc123"}, req("DELETE", "/live/%40connections/a%2Fb%3D", "", ""), "",
			[]string{"execute-api:ManageConnections arn:aws:execute-api:us-east-1:000000000000:abc123/live/DELETE/@connections/a/b="}},
		{"autoscaling terminate", AutoScaling{ARNs: arns, Group: "g"}, req("POST", "/", "", ""), "Action=TerminateInstanceInAutoScalingGroup&InstanceId=i-1",
			[]string{"autoscaling:TerminateInstanceInAutoScalingGroup arn:aws:autoscaling:us-east-1:000000000000:autoScalingGroup:00000000-0000-0000-0000-000000000000:autoScalingGroupName/g"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			calls, err := tt.service.Calls(tt.r, []byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range calls {
				got = append(got, c.Action+" "+c.Resource)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestS3Calls(t *testing.T) {
	for _, tt := range []struct {
		method, url, body string
		want              string
	}{
		{"GET", "/b/artifacts/o/1.tar.gz?X-Amz-Credential=K%2F20250101%2Fus-east-1%2Fs3%2Faws4_request", "", "s3:GetObject arn:aws:s3:::b/artifacts/o/1.tar.gz"},
		{"HEAD", "/b/k", "", "s3:GetObject arn:aws:s3:::b/k"},
		{"POST", "/b/k?uploads", "", "s3:PutObject arn:aws:s3:::b/k"},
		{"PUT", "/b/k?partNumber=1&uploadId=u", "", "s3:PutObject arn:aws:s3:::b/k"},
		{"DELETE", "/b/k?uploadId=u", "", "s3:AbortMultipartUpload arn:aws:s3:::b/k"},
		{"DELETE", "/b/k", "", "s3:DeleteObject arn:aws:s3:::b/k"},
		{"GET", "/b?list-type=2", "", "s3:ListBucket arn:aws:s3:::b"},
		{"POST", "/b?delete", "<Delete><Object><Key>a</Key></Object><Object><Key>c/d</Key></Object></Delete>", "s3:DeleteObject arn:aws:s3:::b/a,s3:DeleteObject arn:aws:s3:::b/c/d"},
	} {
		r := httptest.NewRequest(tt.method, tt.url, nil)
		calls, err := S3Calls(r, []byte(tt.body))
		if err != nil {
			t.Fatalf("%s %s: %v", tt.method, tt.url, err)
		}
		var got []string
		for _, c := range calls {
			got = append(got, c.Action+" "+c.Resource)
		}
		if strings.Join(got, ",") != tt.want {
			t.Errorf("%s %s: %v, want %s", tt.method, tt.url, got, tt.want)
		}
	}
}

// TestListingPrefixCondition: a listing carries s3:prefix, so a grant limited to a prefix allows
// listing under it only.
func TestListingPrefixCondition(t *testing.T) {
	grant := []Statement{{Actions: []string{"s3:ListBucket"}, Resources: []string{"arn:aws:s3:::b"},
		Condition: map[string]map[string][]string{"StringLike": {"s3:prefix": {"artifacts/caches/*"}}}}}
	for prefix, want := range map[string]decision{"artifacts/caches/o/p/": allowed, "artifacts/o/": implicitDeny, "": implicitDeny} {
		calls, err := S3Calls(httptest.NewRequest("GET", "/b?list-type=2&prefix="+prefix, nil), nil)
		if err != nil || len(calls) != 1 {
			t.Fatalf("%q: %v %v", prefix, calls, err)
		}
		if got := evaluate(grant, calls[0]); got != want {
			t.Errorf("listing %q: %v, want %v", prefix, got, want)
		}
	}
}

// TestGuardAnswersInTheProtocol: a refused request never reaches the stand-in, and its answer is
// the service's AccessDenied naming principal, action and resource.
func TestGuardAnswersInTheProtocol(t *testing.T) {
	a := testAuthorizer(t)
	reached := false
	g := &Guard{Auth: a, Service: StepFunctions{"arn:aws:states:us-east-1:000000000000:stateMachine:kiln-builds"},
		Next: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true })}
	r := httptest.NewRequest("POST", "/", strings.NewReader(`{"stateMachineArn":"arn:aws:states:us-east-1:000000000000:stateMachine:kiln-builds","name":"b1"}`))
	r.Header.Set("X-Amz-Target", "AWSStepFunctions.StartExecution")
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=KEY-schedule/20250101/us-east-1/states/aws4_request, SignedHeaders=host, Signature=x")
	w := httptest.NewRecorder()
	g.ServeHTTP(w, r)
	if reached || w.Code != 400 || !strings.Contains(w.Body.String(), `"__type":"AccessDeniedException"`) ||
		!strings.Contains(w.Body.String(), "assumed-role/ScheduleFunctionRole25F55115/schedule is not authorized to perform: states:StartExecution") {
		t.Fatalf("reached %v, %d %s", reached, w.Code, w.Body.String())
	}
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=KEY-states/20250101/us-east-1/states/aws4_request, SignedHeaders=host, Signature=x")
	w = httptest.NewRecorder()
	r.Body = http.NoBody
	g.ServeHTTP(w, r)
	if reached || !strings.Contains(w.Body.String(), "not authorized") {
		t.Fatalf("an empty StartExecution by the state machine: reached %v, %s", reached, w.Body.String())
	}
}
