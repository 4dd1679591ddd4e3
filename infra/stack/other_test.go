package stack_test

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/kilnbuild/kiln/infra/stack"
)

// TestOtherSettings: the stack with the default images and repository, tracing on, a custom
// domain and a 14-day retention.
func TestOtherSettings(t *testing.T) {
	env := obj{
		"KILN_PUBLIC_URL":         "https://kiln.example.com", // no trailing slash
		"KILN_ARTIFACT_RETENTION": "14d",
		"KILN_ENGINE_VERSIONS":    "5.4",
		"KILN_HOST_IMAGES": obj{"Fn::Join": []any{"", joined(`{"5.4":"`,
			[]any{ref("AWS::AccountId"), ".dkr.ecr.", ref("AWS::Region"), ".", ref("AWS::URLSuffix"), "/kiln-host:5.4"}, `"}`)}},
	}
	for name, want := range env {
		t.Run(name, func(t *testing.T) {
			check(t, func() {
				other.HasResourceProperties(jsii.String("AWS::Lambda::Function"), obj{
					"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{name: want})},
				})
			})
		})
	}
	t.Run("tracing", func(t *testing.T) {
		check(t, func() {
			other.HasResourceProperties(jsii.String("AWS::StepFunctions::StateMachine"), obj{"TracingConfiguration": obj{"Enabled": true}})
		})
	})
	t.Run("lifecycle", func(t *testing.T) {
		rules := []any{obj{"Id": "expire-artifacts-backstop", "Status": "Enabled", "Prefix": "artifacts/", "ExpirationInDays": 14 + stack.ExpiryMarginDays}}
		check(t, func() {
			other.HasResourceProperties(jsii.String("AWS::S3::Bucket"), obj{
				"LifecycleConfiguration": obj{"Rules": assertions.Match_ArrayWith(&rules)},
			})
		})
	})
	t.Run("buildspec", func(t *testing.T) {
		check(t, func() {
			other.HasResourceProperties(jsii.String("AWS::CodeBuild::Project"), obj{
				"Source": obj{"Type": "NO_SOURCE", "BuildSpec": stack.DefaultBuildspec},
			})
		})
	})
}

func TestHTTPAPI(t *testing.T) {
	api := httpAPIID(t)
	integration := idOf(t, "AWS::ApiGatewayV2::Integration", "DefaultRouteAPIIntegration")
	fn := functionLogicalID(t, "api")
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
