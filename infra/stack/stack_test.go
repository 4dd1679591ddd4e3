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

	"github.com/kilnbuild/kiln/infra/stack"
)

// The template of the stack, synthesized once in TestMain for every test (starting the jsii
// runtime and loading aws-cdk-lib into Node takes about two seconds).
var template assertions.Template

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
	ctx, err := stack.CDKContext("../../cdk.json")
	if err != nil {
		return 0, err
	}
	app := awscdk.NewApp(&awscdk.AppProps{Context: &ctx, Outdir: jsii.String(filepath.Join(dir, "cdk.out"))})
	template = assertions.Template_FromStack(stack.New(app, "Test", stack.Props{LambdaAssetRoot: assets, Buildspec: testBuildspec}), nil)
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
		"AWS::DynamoDB::Table":           1,
		"AWS::SecretsManager::Secret":    1,
		"AWS::Lambda::Function":          1,
		"AWS::Logs::LogGroup":            1,
		"AWS::ApiGatewayV2::Api":         1,
		"AWS::ApiGatewayV2::Route":       1,
		"AWS::ApiGatewayV2::Integration": 1,
		"AWS::ApiGatewayV2::Stage":       1,
		"AWS::Lambda::Permission":        1,
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

func TestMasterKey(t *testing.T) {
	check(t, func() {
		template.HasResource(jsii.String("AWS::SecretsManager::Secret"), obj{
			"DeletionPolicy": "Retain",
			"Properties": obj{
				"GenerateSecretString": obj{"PasswordLength": 64, "ExcludePunctuation": true},
			},
		})
	})
}

func TestAPIFunction(t *testing.T) {
	table := logicalID(t, "AWS::DynamoDB::Table")
	secret := logicalID(t, "AWS::SecretsManager::Secret")
	logs := logicalID(t, "AWS::Logs::LogGroup")
	for name, want := range map[string]any{
		"Runtime":       "provided.al2023",
		"Architectures": []any{"arm64"},
		"Handler":       "bootstrap",
		"MemorySize":    512,
		"Timeout":       29,
		"Environment": obj{"Variables": assertions.Match_ObjectEquals(&obj{
			"KILN_DYNAMODB_TABLE":        ref(table),
			"KILN_MASTER_KEY_SECRET_ARN": ref(secret),
		})},
		"LoggingConfig": obj{"LogGroup": ref(logs)},
	} {
		t.Run(name, func(t *testing.T) {
			check(t, func() {
				template.HasResourceProperties(jsii.String("AWS::Lambda::Function"), obj{name: want})
			})
		})
	}
	t.Run("log retention", func(t *testing.T) {
		check(t, func() {
			template.HasResourceProperties(jsii.String("AWS::Logs::LogGroup"), obj{"RetentionInDays": 30})
		})
	})
}

func TestAPIFunctionPolicy(t *testing.T) {
	table := logicalID(t, "AWS::DynamoDB::Table")
	secret := logicalID(t, "AWS::SecretsManager::Secret")
	role := logicalID(t, "AWS::IAM::Role")
	tableAndIndexes := []any{
		arnOf(table),
		obj{"Fn::Join": []any{"", []any{arnOf(table), "/index/*"}}},
	}
	// What the store does (a transaction needs the actions of the writes it holds), each granted
	// on the table and its indexes; the master key is read. One action at a time: with
	// @aws-cdk/aws-iam:minimizePolicies the actions are sorted and merged.
	for _, tc := range []struct {
		action   string
		resource any
	}{
		{"dynamodb:GetItem", assertions.Match_ArrayEquals(&tableAndIndexes)},
		{"dynamodb:Query", assertions.Match_ArrayEquals(&tableAndIndexes)},
		{"dynamodb:PutItem", assertions.Match_ArrayEquals(&tableAndIndexes)},
		{"dynamodb:UpdateItem", assertions.Match_ArrayEquals(&tableAndIndexes)},
		{"dynamodb:DeleteItem", assertions.Match_ArrayEquals(&tableAndIndexes)},
		{"dynamodb:ConditionCheckItem", assertions.Match_ArrayEquals(&tableAndIndexes)},
		{"dynamodb:BatchWriteItem", assertions.Match_ArrayEquals(&tableAndIndexes)},
		{"dynamodb:DescribeTable", assertions.Match_ArrayEquals(&tableAndIndexes)},
		{"secretsmanager:GetSecretValue", ref(secret)},
	} {
		t.Run(tc.action, func(t *testing.T) {
			actions := []any{tc.action}
			statements := []any{obj{
				"Effect":   "Allow",
				"Action":   assertions.Match_ArrayWith(&actions),
				"Resource": tc.resource,
			}}
			check(t, func() {
				template.HasResourceProperties(jsii.String("AWS::IAM::Policy"), obj{
					"PolicyDocument": obj{"Statement": assertions.Match_ArrayWith(&statements)},
					"Roles":          []any{ref(role)},
				})
			})
		})
	}
}

func TestHTTPAPI(t *testing.T) {
	api := logicalID(t, "AWS::ApiGatewayV2::Api")
	integration := logicalID(t, "AWS::ApiGatewayV2::Integration")
	fn := logicalID(t, "AWS::Lambda::Function")
	for typ, props := range map[string]obj{
		"AWS::ApiGatewayV2::Api": {"ProtocolType": "HTTP"},
		"AWS::ApiGatewayV2::Route": {
			"ApiId":    ref(api),
			"RouteKey": "$default",
			"Target":   obj{"Fn::Join": []any{"", []any{"integrations/", ref(integration)}}},
		},
		"AWS::ApiGatewayV2::Integration": {
			"ApiId":                ref(api),
			"IntegrationType":      "AWS_PROXY",
			"IntegrationUri":       arnOf(fn),
			"PayloadFormatVersion": "2.0",
		},
		"AWS::ApiGatewayV2::Stage": {"ApiId": ref(api), "StageName": "$default", "AutoDeploy": true},
		"AWS::Lambda::Permission": {
			"Action":       "lambda:InvokeFunction",
			"FunctionName": arnOf(fn),
			"Principal":    "apigateway.amazonaws.com",
		},
	} {
		t.Run(typ, func(t *testing.T) {
			check(t, func() { template.HasResourceProperties(jsii.String(typ), props) })
		})
	}
}

func TestOutputs(t *testing.T) {
	api := logicalID(t, "AWS::ApiGatewayV2::Api")
	table := logicalID(t, "AWS::DynamoDB::Table")
	secret := logicalID(t, "AWS::SecretsManager::Secret")
	apiRef := []any{ref(api)}
	for name, value := range map[string]any{
		"ApiUrl":             obj{"Fn::Join": []any{"", assertions.Match_ArrayWith(&apiRef)}},
		"TableName":          ref(table),
		"MasterKeySecretArn": ref(secret),
	} {
		t.Run(name, func(t *testing.T) {
			check(t, func() { template.HasOutput(jsii.String(name), obj{"Value": value}) })
		})
	}
}
