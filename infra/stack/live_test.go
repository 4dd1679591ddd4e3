package stack_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/kilnbuild/kiln/infra/stack"
)

func liveAPIID(t *testing.T) string {
	return idOf(t, "AWS::ApiGatewayV2::Api", "LiveAPI")
}

// liveEndpoint is KILN_LIVE_ENDPOINT as the template writes it.
func liveEndpoint(t *testing.T) obj {
	return obj{"Fn::Join": []any{"", []any{"https://", ref(liveAPIID(t)), ".execute-api.", ref("AWS::Region"), ".", ref("AWS::URLSuffix"), "/live"}}}
}

// connectionsArn is the @connections ARN of the live stage for one method, every connection.
func connectionsArn(t *testing.T, method string) obj {
	return obj{"Fn::Join": []any{"", []any{"arn:", ref("AWS::Partition"), ":execute-api:", ref("AWS::Region"), ":", ref("AWS::AccountId"), ":",
		ref(liveAPIID(t)), "/live/" + method + "/@connections/*"}}}
}

// TestLiveAPI: a WebSocket API whose $connect, $disconnect and $default routes each invoke the
// live function (proxy integration), on an auto-deployed stage named stack.LiveStage; API
// Gateway may invoke the function for each route.
func TestLiveAPI(t *testing.T) {
	api := liveAPIID(t)
	fn := functionLogicalID(t, "live")
	check(t, func() {
		template.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Api"), obj{"ProtocolType": "WEBSOCKET", "RouteSelectionExpression": "$request.body.action"})
		template.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Stage"), obj{"ApiId": ref(api), "StageName": stack.LiveStage, "AutoDeploy": true})
	})
	integrations := map[string]bool{}
	for id, r := range resources(t, "AWS::ApiGatewayV2::Integration") {
		p := r["Properties"].(obj)
		if equalJSON(p["ApiId"], ref(api)) {
			if p["IntegrationType"] != "AWS_PROXY" || !strings.Contains(jsonString(p["IntegrationUri"]), fn) {
				t.Errorf("integration %s: %s", id, jsonString(p))
			}
			integrations[id] = true
		}
	}
	var keys []string
	for _, r := range resources(t, "AWS::ApiGatewayV2::Route") {
		p := r["Properties"].(obj)
		if !equalJSON(p["ApiId"], ref(api)) {
			continue
		}
		keys = append(keys, p["RouteKey"].(string))
		target := jsonString(p["Target"])
		if !slices.ContainsFunc(mapKeys(integrations), func(id string) bool { return strings.Contains(target, id) }) {
			t.Errorf("route %s targets %s, no integration of the live function", p["RouteKey"], target)
		}
	}
	slices.Sort(keys)
	if want := []string{"$connect", "$default", "$disconnect"}; !slices.Equal(keys, want) {
		t.Errorf("routes %v, want %v", keys, want)
	}
	var sources []string
	for _, r := range resources(t, "AWS::Lambda::Permission") {
		p := r["Properties"].(obj)
		if equalJSON(p["FunctionName"], arnOf(fn)) && p["Principal"] == "apigateway.amazonaws.com" {
			sources = append(sources, jsonString(p["SourceArn"]))
		}
	}
	for _, key := range []string{"$connect", "$disconnect", "$default"} {
		if !slices.ContainsFunc(sources, func(s string) bool { return strings.Contains(s, `/*`+key+`"`) && strings.Contains(s, api) }) {
			t.Errorf("no invoke permission for the %s route of %s: %v", key, api, sources)
		}
	}
}

// TestLiveGrantsAreScopedToTheStage: every execute-api:ManageConnections statement of the stack
// names the live stage's @connections ARNs (POST, GET, DELETE), never "*" or another stage;
// the functions that post are told the endpoint, the others are not.
func TestLiveGrantsAreScopedToTheStage(t *testing.T) {
	sorted := func(rs []any) []string {
		var out []string
		for _, r := range rs {
			out = append(out, jsonString(r))
		}
		slices.Sort(out)
		return out
	}
	want := sorted([]any{connectionsArn(t, "POST"), connectionsArn(t, "GET"), connectionsArn(t, "DELETE")})
	for _, name := range stack.Functions {
		t.Run(name, func(t *testing.T) {
			granted := false
			for _, s := range roleStatements(t, roleOf(t, name)) {
				if !slices.Contains(s.actions, "execute-api:ManageConnections") {
					continue
				}
				granted = true
				if len(s.actions) != 1 || !slices.Equal(sorted(s.resources), want) {
					t.Errorf("ManageConnections statement %v on %s, want on %v only", s.actions, jsonString(s.resources), want)
				}
			}
			env := resources(t, "AWS::Lambda::Function")[functionLogicalID(t, name)]["Properties"].(obj)["Environment"].(obj)["Variables"].(obj)
			endpoint, told := env["KILN_LIVE_ENDPOINT"]
			posts := slices.Contains([]string{"api", "task", "ended", "schedule", "live"}, name)
			if granted != posts || told != posts || (told && !equalJSON(endpoint, liveEndpoint(t))) {
				t.Errorf("granted %v, endpoint %v; want both %v", granted, jsonString(endpoint), posts)
			}
		})
	}
}

// TestDistribution: one base URL — /socket.io/* goes to the WebSocket API's stage (origin path
// /live, the URI rewritten to / by a viewer-request function, query strings and the
// Sec-WebSocket-* headers forwarded, nothing cached), the rest to the HTTP API with the
// Authorization header in the cache key (CloudFront forwards it no other way).
func TestDistribution(t *testing.T) {
	dist := props(t, "AWS::CloudFront::Distribution")["DistributionConfig"].(obj)
	origins := map[string]obj{}
	for _, o := range asList(dist["Origins"]) {
		origins[o.(obj)["Id"].(string)] = o.(obj)
	}
	domainOf := func(api string) string {
		return jsonString(obj{"Fn::Join": []any{"", []any{ref(api), ".execute-api.", ref("AWS::Region"), ".", ref("AWS::URLSuffix")}}})
	}
	const allViewerExceptHost = "b689b0a8-53d0-40ab-baf2-68738e2966ac" // AWS's managed AllViewerExceptHostHeader
	const cachingDisabled = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"     // AWS's managed CachingDisabled
	var live obj
	for _, b := range asList(dist["CacheBehaviors"]) {
		if b.(obj)["PathPattern"] == stack.LivePathPattern {
			live = b.(obj)
		}
	}
	if live == nil || len(asList(dist["CacheBehaviors"])) != 1 {
		t.Fatalf("behaviors %s, want one for %s", jsonString(dist["CacheBehaviors"]), stack.LivePathPattern)
	}
	liveOrigin := origins[live["TargetOriginId"].(string)]
	if jsonString(liveOrigin["DomainName"]) != domainOf(liveAPIID(t)) || liveOrigin["OriginPath"] != "/live" ||
		live["CachePolicyId"] != cachingDisabled || live["OriginRequestPolicyId"] != allViewerExceptHost || live["ViewerProtocolPolicy"] != "https-only" {
		t.Errorf("%s: behavior %s, origin %s", stack.LivePathPattern, jsonString(live), jsonString(liveOrigin))
	}
	fn := logicalID(t, "AWS::CloudFront::Function")
	if a := asList(live["FunctionAssociations"]); len(a) != 1 || a[0].(obj)["EventType"] != "viewer-request" ||
		!equalJSON(a[0].(obj)["FunctionARN"], obj{"Fn::GetAtt": []any{fn, "FunctionARN"}}) {
		t.Errorf("%s: function associations %s", stack.LivePathPattern, jsonString(live["FunctionAssociations"]))
	}
	code := resources(t, "AWS::CloudFront::Function")[fn]["Properties"].(obj)["FunctionCode"].(string)
	if !strings.Contains(code, "request.uri = '/'") {
		t.Errorf("the viewer-request function does not send the stage path: %s", code)
	}
	def := dist["DefaultCacheBehavior"].(obj)
	apiOrigin := origins[def["TargetOriginId"].(string)]
	if jsonString(apiOrigin["DomainName"]) != domainOf(httpAPIID(t)) || apiOrigin["OriginPath"] != nil ||
		def["OriginRequestPolicyId"] != allViewerExceptHost || def["ViewerProtocolPolicy"] != "https-only" || len(asList(def["AllowedMethods"])) != 7 {
		t.Errorf("default behavior %s, origin %s", jsonString(def), jsonString(apiOrigin))
	}
	policy := resources(t, "AWS::CloudFront::CachePolicy")[idOf(t, "AWS::CloudFront::CachePolicy", "APICachePolicy")]["Properties"].(obj)["CachePolicyConfig"].(obj)
	if !equalJSON(def["CachePolicyId"], ref(idOf(t, "AWS::CloudFront::CachePolicy", "APICachePolicy"))) ||
		policy["DefaultTTL"] != 0.0 || policy["MinTTL"] != 0.0 || policy["MaxTTL"] != 1.0 ||
		!strings.Contains(jsonString(policy["ParametersInCacheKeyAndForwardedToOrigin"]), `"Headers":["Authorization"]`) {
		t.Errorf("the API's cache policy %s", jsonString(policy))
	}
}

// TestLiveItemsExpire: the table the live function keeps connection and room items in expires
// items by their ttl attribute.
func TestLiveItemsExpire(t *testing.T) {
	check(t, func() {
		template.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), obj{
			"TimeToLiveSpecification": assertions.Match_ObjectEquals(&obj{"AttributeName": "ttl", "Enabled": true}),
		})
	})
}

func mapKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
