package stack_test

import (
	"slices"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/kilnbuild/kiln/infra/stack"
)

// wantEnvironment is what every function is configured with (awsapp.LoadAWSConfig), but the task
// function's KILN_STATE_MACHINE_ARN: the state machine refers to the task function.
func wantEnvironment(t *testing.T, name string) obj {
	t.Helper()
	api := httpAPIID(t)
	env := obj{
		"KILN_DYNAMODB_TABLE":        ref(logicalID(t, "AWS::DynamoDB::Table")),
		"KILN_MASTER_KEY_SECRET_ARN": ref(secretID(t, "MasterKey")),
		"KILN_ARTIFACTS":             obj{"Fn::Join": []any{"", []any{"s3://", ref(logicalID(t, "AWS::S3::Bucket")), "/artifacts"}}},
		"KILN_ARTIFACT_RETENTION":    "30d",
		"KILN_PUBLIC_URL":            obj{"Fn::GetAtt": []any{api, "ApiEndpoint"}},
		"KILN_ENGINE_VERSIONS":       "5.3,5.4",
		"KILN_HOST_PROJECT":          ref(logicalID(t, "AWS::CodeBuild::Project")),
		"KILN_HOST_CREDENTIAL_PATH":  "/Test/hosts",
		"KILN_HOST_IMAGES": obj{"Fn::Join": []any{"", joined(
			`{"5.3":"`, imageURI("ue-5.3"), `","5.4":"`, imageURI("ue-5.4"), `"}`,
		)}},
		"KILN_DELIVERY_QUEUE_URL": ref(queueID(t, "DeliveryQueue")),
		"KILN_GITHUB_SECRET_ARN":  ref(secretID(t, "GitHubApp")),
		"KILN_GITHUB_APP_ID":      "12345",
		"KILN_GITHUB_APP_SLUG":    "kiln-test",
		"KILN_STATE_MACHINE_ARN":  ref(logicalID(t, "AWS::StepFunctions::StateMachine")),
		"KILN_WINDOWS_HOST_GROUP": ref(logicalID(t, "AWS::AutoScaling::AutoScalingGroup")),
		"KILN_AWS_ACCOUNT_ID":     ref("AWS::AccountId"),
	}
	if name == "task" {
		delete(env, "KILN_STATE_MACHINE_ARN")
	}
	if slices.Contains([]string{"api", "task", "ended", "schedule", "live"}, name) { // they post to the live sockets
		env["KILN_LIVE_ENDPOINT"] = liveEndpoint(t)
	}
	if name == "api" { // only the API verifies the Windows hosts' identity documents
		env["KILN_EC2_IDENTITY_CERTS"] = testIdentityCert
		env["KILN_P4"] = "/opt/bin/p4" // and checks Perforce: the p4 layer (TestP4Layer)
	}
	return env
}

// imageURI is an image of the test's host repository, as the parts of a Fn::Join.
func imageURI(tag string) []any {
	return []any{ref("AWS::AccountId"), ".dkr.ecr.", ref("AWS::Region"), ".", ref("AWS::URLSuffix"), "/kiln-test-host:" + tag}
}

func TestFunctions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		memory   int
		timeout  int
		triggers string
	}{
		{"api", 512, 29, "apigateway.amazonaws.com"},
		{"task", 256, 50, ""},
		{"ended", 256, 60, "events.amazonaws.com"},
		{"schedule", 512, 55, "events.amazonaws.com"},
		{"deliver", 1024, 900, ""},
		{"admin", 256, 60, ""},
		{"live", 256, 29, "apigateway.amazonaws.com"}, // its three routes' permissions
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := functionLogicalID(t, tc.name)
			logs := idOf(t, "AWS::Logs::LogGroup", functionConstructIDs[tc.name]+"Logs")
			role := roleOf(t, tc.name)
			check(t, func() {
				template.HasResourceProperties(jsii.String("AWS::Lambda::Function"), obj{
					"Runtime":       "provided.al2023",
					"Architectures": []any{"arm64"},
					"Handler":       "bootstrap",
					"MemorySize":    tc.memory,
					"Timeout":       tc.timeout,
					"Role":          arnOf(role),
					"Environment":   obj{"Variables": assertions.Match_ObjectEquals(ptr(wantEnvironment(t, tc.name)))},
					"LoggingConfig": obj{"LogGroup": ref(logs)},
				})
			})
			lg := resources(t, "AWS::Logs::LogGroup")[logs]["Properties"].(obj)
			if lg["RetentionInDays"] != 30.0 {
				t.Errorf("log group retention %v, want 30 days", lg["RetentionInDays"])
			}
			// Its own role: no managed policy (AWSLambdaBasicExecutionRole writes any log
			// group), its logs written to its own group only.
			r := resources(t, "AWS::IAM::Role")[role]["Properties"].(obj)
			if r["ManagedPolicyArns"] != nil {
				t.Errorf("role has managed policies %v", r["ManagedPolicyArns"])
			}
			for _, s := range roleStatements(t, role) {
				for _, a := range s.actions {
					if a[:5] == "logs:" && (len(s.resources) != 1 || !equalJSON(s.resources[0], arnOf(logs))) {
						t.Errorf("%s on %v, want its own log group only", a, s.resources)
					}
				}
			}
			var principals []string
			for _, p := range resources(t, "AWS::Lambda::Permission") {
				p := p["Properties"].(obj)
				if equalJSON(p["FunctionName"], arnOf(id)) && !slices.Contains(principals, p["Principal"].(string)) {
					principals = append(principals, p["Principal"].(string))
				}
			}
			if want := []string{tc.triggers}; (tc.triggers == "" && len(principals) != 0) || (tc.triggers != "" && !equalJSON(principals, want)) {
				t.Errorf("invoked by %v, want %q", principals, tc.triggers)
			}
		})
	}
}

// joined is the parts of a Fn::Join as CDK writes them: lists spliced, adjacent strings merged.
func joined(parts ...any) []any {
	var flat, out []any
	for _, p := range parts {
		if l, ok := p.([]any); ok {
			flat = append(flat, l...)
		} else {
			flat = append(flat, p)
		}
	}
	for _, p := range flat {
		if s, ok := p.(string); ok && len(out) > 0 {
			if last, ok := out[len(out)-1].(string); ok {
				out[len(out)-1] = last + s
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// TestFunctionsGetTheStacksRetention: every function whose configuration reads
// KILN_ARTIFACT_RETENTION (log chunks' ttl, the janitor, artifact expiry) is given the stack's
// ArtifactRetentionDays, in both test stacks (30 days by default, 14 in the other one). Which
// functions read it comes from their mains' loaders, run on the template's environment.
func TestFunctionsGetTheStacksRetention(t *testing.T) {
	for _, st := range []struct {
		name     string
		template assertions.Template
		want     string
	}{{"Test", template, "30d"}, {"Other", other, "14d"}} {
		fns := map[string]obj{}
		for id, r := range (*st.template.ToJSON())["Resources"].(map[string]any) {
			if r := r.(obj); r["Type"] == "AWS::Lambda::Function" {
				fns[id] = r["Properties"].(obj)
			}
		}
		for _, name := range stack.Functions {
			t.Run(st.name+"/"+name, func(t *testing.T) {
				var env obj
				for id, p := range fns {
					if m := cdkID.FindStringSubmatch(id); m != nil && m[1] == functionConstructIDs[name] {
						env, _ = p["Environment"].(obj)["Variables"].(obj)
					}
				}
				if env == nil {
					t.Fatalf("no function %s in the template", name)
				}
				if !readsOf(t, name, env)["KILN_ARTIFACT_RETENTION"] {
					return
				}
				if got := env["KILN_ARTIFACT_RETENTION"]; got != st.want {
					t.Errorf("KILN_ARTIFACT_RETENTION = %v, want %s: the function reads it", got, st.want)
				}
			})
		}
	}
}
