package stack_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/kilnbuild/kiln/infra/stack"
)

// The template of the stack, synthesized once in TestMain for every test (starting the jsii
// runtime and loading aws-cdk-lib into Node takes about two seconds).
var template assertions.Template

// other is the template of a stack with other settings (TestOtherSettings).
var other assertions.Template

const (
	testWindowsAMI = "ami-0123456789abcdef0"
	testLinuxAMI   = "ami-0fedcba9876543210"
)

// testIdentityCert stands for AWS's identity certificate: the stack passes it on, unread.
const testIdentityCert = "-----BEGIN CERTIFICATE-----\nMIIBtest\n-----END CERTIFICATE-----\n"

// testBuildspec is the hosts' buildspec the test stack is given.
const testBuildspec = "version: 0.2\nphases:\n  build:\n    commands:\n      - kiln agent run --test\n"

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	// Node 20 works; the jsii runtime's end-of-life banner is noise in test output.
	if os.Getenv("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION") == "" {
		os.Setenv("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
	}
	defer jsii.Close()
	dir, err := os.MkdirTemp("", "kiln-infra-test")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	// Dummy Lambda assets, outside the cloud assembly directory (an asset containing the
	// assembly would be copied into itself).
	assets := filepath.Join(dir, "lambda")
	for _, name := range stack.Functions {
		if err := os.MkdirAll(filepath.Join(assets, name), 0o755); err != nil {
			return 0, err
		}
		if err := os.WriteFile(filepath.Join(assets, name, "bootstrap"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			return 0, err
		}
	}
	// A stand-in for the operator's p4 client: the stack ships the file as it is.
	p4 := filepath.Join(dir, "p4")
	if err := os.WriteFile(p4, []byte("#!/bin/sh\n"), 0o755); err != nil {
		return 0, err
	}
	ctx, err := stack.CDKContext("../../cdk.json")
	if err != nil {
		return 0, err
	}
	app := awscdk.NewApp(&awscdk.AppProps{Context: &ctx, Outdir: jsii.String(filepath.Join(dir, "cdk.out"))})
	main := stack.New(app, "Test", stack.Props{
		LambdaAssetRoot: assets,
		Buildspec:       testBuildspec,
		HostRepository:  "kiln-test-host",
		HostImages:      map[string]string{"5.4": "ue-5.4", "5.3": "ue-5.3"},
		GitHubAppID:     "12345",
		GitHubAppSlug:   "kiln-test",
		// Windows hosts on, with their settings; the other stack has none.
		WindowsAMI:              testWindowsAMI,
		EC2IdentityCertificates: testIdentityCert,
		WindowsInstanceType:     "m6i.4xlarge",
		WindowsWarmPoolSize:     3,
		WindowsMaxHosts:         12,
		WindowsEgressPorts:      []int{443, 1666},
		P4File:                  p4,
	})
	// The other settings: defaults, but tracing, a custom domain and a shorter retention. (Both
	// stacks first: the first template synthesizes the app.)
	second := stack.New(app, "Other", stack.Props{
		LambdaAssetRoot:       assets,
		Tracing:               true,
		PublicURL:             "https://kiln.example.com/",
		ArtifactRetentionDays: 14,
	})
	// Linux hosts beside the Windows hosts (linuxhosts_test.go).
	third := stack.New(app, "Hosts", stack.Props{
		LambdaAssetRoot:         assets,
		HostImages:              map[string]string{"5.3": "ue-5.3"},
		WindowsAMI:              testWindowsAMI,
		EC2IdentityCertificates: testIdentityCert,
		LinuxAMI:                testLinuxAMI,
		LinuxEngineVersions:     []string{"5.4", "5.5"},
		LinuxWarmPoolSize:       4,
		LinuxMaxHosts:           8,
	})
	// cdk-nag's AWS Solutions rules on the stacks (TestCDKNag reads their errors).
	for name, st := range map[string]awscdk.Stack{"Test": main, "Other": second, "Hosts": third} {
		awscdk.Aspects_Of(st).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
		nagged[name] = st
	}
	template = assertions.Template_FromStack(main, nil)
	other = assertions.Template_FromStack(second, nil)
	hosts = assertions.Template_FromStack(third, nil)
	if path := os.Getenv("KILN_INFRA_TEMPLATE_OUT"); path != "" { // to read the template while editing the stack
		b, err := json.MarshalIndent(template.ToJSON(), "", "  ")
		if err != nil {
			return 0, err
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return 0, err
		}
	}
	return m.Run(), nil
}

// equalJSON reports whether a and b are the same JSON value.
func equalJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// check runs an assertion, turning the panic a failed jsii assertion raises into a test failure.
func check(t *testing.T, assert func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatal(r)
		}
	}()
	assert()
}

// resources returns the template's resources of a type, by logical id, as plain JSON.
func resources(t *testing.T, typ string) map[string]obj {
	t.Helper()
	out := map[string]obj{}
	var all map[string]any
	check(t, func() { all = (*template.ToJSON())["Resources"].(map[string]any) })
	for id, r := range all {
		if r := r.(obj); r["Type"] == typ {
			out[id] = r
		}
	}
	return out
}

// props returns the properties of the only resource of the type.
func props(t *testing.T, typ string) obj {
	t.Helper()
	return resources(t, typ)[logicalID(t, typ)]["Properties"].(obj)
}

// logicalID returns the logical id of the only resource of the type.
func logicalID(t *testing.T, typ string) string {
	t.Helper()
	var ids []string
	check(t, func() {
		for id := range *template.FindResources(jsii.String(typ), nil) {
			ids = append(ids, id)
		}
	})
	if len(ids) != 1 {
		t.Fatalf("%s: want 1 resource, got %v", typ, ids)
	}
	return ids[0]
}

type obj = map[string]any

func ref(id string) obj   { return obj{"Ref": id} }
func arnOf(id string) obj { return obj{"Fn::GetAtt": []any{id, "Arn"}} }
func key(name, typ string) obj {
	return obj{"AttributeName": name, "KeyType": typ}
}

func TestResourceCounts(t *testing.T) {
	for typ, n := range map[string]float64{
		"AWS::DynamoDB::Table":             1,
		"AWS::KMS::Key":                    1,
		"AWS::S3::Bucket":                  1,
		"AWS::SecretsManager::Secret":      2,
		"AWS::Lambda::Function":            7,
		"AWS::Logs::LogGroup":              10, // seven functions, the hosts, the state machine, the API's access logs
		"AWS::IAM::Role":                   10, // seven functions, the hosts, the state machine, the Windows hosts
		"AWS::ApiGatewayV2::Api":           2,  // the HTTP API, the WebSocket API (live.go)
		"AWS::ApiGatewayV2::Route":         4,  // $default; $connect, $disconnect, $default
		"AWS::ApiGatewayV2::Integration":   4,
		"AWS::ApiGatewayV2::Stage":         2,
		"AWS::Lambda::Permission":          6, // the HTTP API, the ended rule, the schedule rule, the WebSocket API's three routes
		"AWS::CloudFront::Distribution":    1,
		"AWS::CloudFront::Function":        1,
		"AWS::CloudFront::CachePolicy":     1,
		"AWS::StepFunctions::StateMachine": 1,
		"AWS::CodeBuild::Project":          1,
		"AWS::SQS::Queue":                  3,
		"AWS::Events::Rule":                2,
		"AWS::Lambda::EventSourceMapping":  1,
		"AWS::CloudWatch::Alarm":           12, // docs/deploy.md's eleven, the Windows hosts' scaling alarm
		"AWS::SNS::Topic":                  1,
		"AWS::SNS::TopicPolicy":            1, // publishers over TLS only
		"AWS::Lambda::LayerVersion":        1, // the p4 client (kiln:p4)
		"AWS::AutoScaling::LifecycleHook":  1,
		// The Windows hosts (TestNoWindowsHosts: none in the other stack).
		"AWS::EC2::LaunchTemplate":           1,
		"AWS::AutoScaling::AutoScalingGroup": 1,
		"AWS::AutoScaling::WarmPool":         1,
		"AWS::AutoScaling::ScalingPolicy":    1,
		"AWS::EC2::VPC":                      1,
		"AWS::EC2::Subnet":                   2,
		"AWS::EC2::NatGateway":               0,
		"AWS::EC2::SecurityGroup":            1,
		"AWS::IAM::InstanceProfile":          1,
		"AWS::IAM::ServiceLinkedRole":        1,
	} {
		t.Run(typ, func(t *testing.T) {
			check(t, func() { template.ResourceCountIs(jsii.String(typ), jsii.Number(n)) })
		})
	}
}

func TestTable(t *testing.T) {
	attrs := []any{}
	for _, name := range []string{"PK", "SK", "GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK", "GSI3PK", "GSI3SK", "GSI4PK", "GSI4SK"} {
		attrs = append(attrs, obj{"AttributeName": name, "AttributeType": "S"})
	}
	gsis := []any{}
	for _, name := range []string{"GSI1", "GSI2", "GSI3", "GSI4"} {
		gsis = append(gsis, obj{
			"IndexName":  name,
			"KeySchema":  []any{key(name+"PK", "HASH"), key(name+"SK", "RANGE")},
			"Projection": obj{"ProjectionType": "ALL"},
		})
	}
	for name, want := range map[string]any{
		"KeySchema":                        []any{key("PK", "HASH"), key("SK", "RANGE")},
		"AttributeDefinitions":             assertions.Match_ArrayEquals(&attrs),
		"GlobalSecondaryIndexes":           assertions.Match_ArrayEquals(&gsis),
		"BillingMode":                      "PAY_PER_REQUEST",
		"ProvisionedThroughput":            assertions.Match_Absent(),
		"PointInTimeRecoverySpecification": obj{"PointInTimeRecoveryEnabled": true},
		// SSEEnabled without a key: the AWS managed key aws/dynamodb.
		"SSESpecification":        assertions.Match_ObjectEquals(&obj{"SSEEnabled": true}),
		"TableName":               assertions.Match_Absent(),
		"TimeToLiveSpecification": obj{"AttributeName": "ttl", "Enabled": true},
	} {
		t.Run(name, func(t *testing.T) {
			check(t, func() {
				template.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), obj{name: want})
			})
		})
	}
	t.Run("retained", func(t *testing.T) {
		check(t, func() {
			template.HasResource(jsii.String("AWS::DynamoDB::Table"), obj{
				"DeletionPolicy":      "Retain",
				"UpdateReplacePolicy": "Retain",
			})
		})
	})
}

func TestOutputs(t *testing.T) {
	api := httpAPIID(t)
	apiRef := []any{ref(api)}
	for name, value := range map[string]any{
		"ApiUrl":                     obj{"Fn::Join": []any{"", assertions.Match_ArrayWith(&apiRef)}},
		"BaseUrl":                    obj{"Fn::Join": []any{"", []any{"https://", obj{"Fn::GetAtt": []any{logicalID(t, "AWS::CloudFront::Distribution"), "DomainName"}}}}},
		"LiveEndpoint":               liveEndpoint(t),
		"TableName":                  ref(logicalID(t, "AWS::DynamoDB::Table")),
		"MasterKeySecretArn":         ref(secretID(t, "MasterKey")),
		"GitHubAppSecretArn":         ref(secretID(t, "GitHubApp")),
		"ArtifactsBucket":            ref(logicalID(t, "AWS::S3::Bucket")),
		"HostProjectName":            ref(logicalID(t, "AWS::CodeBuild::Project")),
		"StateMachineArn":            ref(logicalID(t, "AWS::StepFunctions::StateMachine")),
		"AdminFunctionName":          ref(functionLogicalID(t, "admin")),
		"AlarmTopicArn":              ref(logicalID(t, "AWS::SNS::Topic")),
		"DeliveryDeadLetterQueueUrl": ref(queueID(t, "DeliveryDeadLetterQueue")),
		"WindowsHostGroup":           ref(logicalID(t, "AWS::AutoScaling::AutoScalingGroup")),
	} {
		t.Run(name, func(t *testing.T) {
			check(t, func() { template.HasOutput(jsii.String(name), obj{"Value": value}) })
		})
	}
}
