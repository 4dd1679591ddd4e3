package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudfront"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudfrontorigins"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// LivePathPattern is the distribution's behavior for Socket.IO: its requests go to the
// WebSocket API, everything else to the HTTP API.
const LivePathPattern = "/socket.io/*"

// liveRewrite is the CloudFront Function (viewer request) of LivePathPattern: a WebSocket API
// accepts the upgrade at its stage's path only, so /socket.io/?EIO=4&transport=websocket goes to
// the origin as /<stage>/ (the origin path) with its query string (EIO, transport) unchanged.
const liveRewrite = `function handler(event) {
  var request = event.request;
  request.uri = '/';
  return request;
}`

// createDistribution defines the CloudFront distribution that gives both APIs one base URL
// (docs/deploy.md, "Live events"): LivePathPattern to the WebSocket API's stage, the rest to
// the HTTP API. Nothing is cached: the API's answers are per caller (the cache key has the
// Authorization header, every cookie and query string, for CloudFront forwards the
// Authorization header only in a cache key, and a response is cached 1 s at most and only when
// the API says so); every other viewer header but Host reaches the origins (API Gateway answers
// 403 to a Host not its own), which includes the WebSocket handshake's Sec-WebSocket-* headers.
func (s *KilnStack) createDistribution() {
	apiDomain := func(apiID *string) *string {
		return awscdk.Fn_Join(jsii.String(""), &[]*string{apiID, jsii.String(".execute-api."), awscdk.Aws_REGION(), jsii.String("."), awscdk.Aws_URL_SUFFIX()})
	}
	apiCache := awscloudfront.NewCachePolicy(s.Stack, jsii.String("APICachePolicy"), &awscloudfront.CachePolicyProps{
		Comment:             jsii.String("kiln API: per caller (Authorization, cookies, query), never longer than the API allows, at most 1 s"),
		DefaultTtl:          awscdk.Duration_Seconds(jsii.Number(0)),
		MinTtl:              awscdk.Duration_Seconds(jsii.Number(0)),
		MaxTtl:              awscdk.Duration_Seconds(jsii.Number(1)),
		HeaderBehavior:      awscloudfront.CacheHeaderBehavior_AllowList(jsii.String("Authorization")),
		CookieBehavior:      awscloudfront.CacheCookieBehavior_All(),
		QueryStringBehavior: awscloudfront.CacheQueryStringBehavior_All(),
	})
	rewrite := awscloudfront.NewFunction(s.Stack, jsii.String("LiveRewrite"), &awscloudfront.FunctionProps{
		Comment: jsii.String("kiln: /socket.io/* to the WebSocket API's stage path"),
		Code:    awscloudfront.FunctionCode_FromInline(jsii.String(liveRewrite)),
		Runtime: awscloudfront.FunctionRuntime_JS_2_0(),
	})
	s.distribution = awscloudfront.NewDistribution(s.Stack, jsii.String("Distribution"), &awscloudfront.DistributionProps{
		Comment: jsii.String("kiln: one base URL for the API and live build events (" + LivePathPattern + ")"),
		DefaultBehavior: &awscloudfront.BehaviorOptions{
			Origin: awscloudfrontorigins.NewHttpOrigin(apiDomain(s.httpAPI.ApiId()), &awscloudfrontorigins.HttpOriginProps{
				ProtocolPolicy: awscloudfront.OriginProtocolPolicy_HTTPS_ONLY,
			}),
			ViewerProtocolPolicy: awscloudfront.ViewerProtocolPolicy_HTTPS_ONLY,
			AllowedMethods:       awscloudfront.AllowedMethods_ALLOW_ALL(),
			CachePolicy:          apiCache,
			OriginRequestPolicy:  awscloudfront.OriginRequestPolicy_ALL_VIEWER_EXCEPT_HOST_HEADER(),
		},
		AdditionalBehaviors: &map[string]*awscloudfront.BehaviorOptions{
			LivePathPattern: {
				Origin: awscloudfrontorigins.NewHttpOrigin(apiDomain(s.liveAPI.ApiId()), &awscloudfrontorigins.HttpOriginProps{
					OriginPath:     jsii.String("/" + LiveStage),
					ProtocolPolicy: awscloudfront.OriginProtocolPolicy_HTTPS_ONLY,
				}),
				ViewerProtocolPolicy: awscloudfront.ViewerProtocolPolicy_HTTPS_ONLY,
				AllowedMethods:       awscloudfront.AllowedMethods_ALLOW_GET_HEAD(),
				CachePolicy:          awscloudfront.CachePolicy_CACHING_DISABLED(),
				OriginRequestPolicy:  awscloudfront.OriginRequestPolicy_ALL_VIEWER_EXCEPT_HOST_HEADER(),
				FunctionAssociations: &[]*awscloudfront.FunctionAssociation{{
					Function: rewrite, EventType: awscloudfront.FunctionEventType_VIEWER_REQUEST,
				}},
			},
		},
	})
	suppress := map[string]string{
		"AwsSolutions-CFR3": "the API Gateway stages and the functions log every request; CloudFront access logs would need a logging bucket and record nothing more",
		"AwsSolutions-CFR4": "the distribution answers on its own *.cloudfront.net name, whose certificate's TLS policy CloudFront sets; a minimum TLS version needs a custom domain and certificate, the operator's",
	}
	var list []*cdknag.NagPackSuppression
	for _, id := range []string{"AwsSolutions-CFR3", "AwsSolutions-CFR4"} { // the errors cdk-nag reports on it
		list = append(list, &cdknag.NagPackSuppression{Id: jsii.String(id), Reason: jsii.String(suppress[id])})
	}
	cdknag.NagSuppressions_AddResourceSuppressions(s.distribution, &list, jsii.Bool(true))
}

// baseURL is the distribution's URL: the one base URL of the API and live events.
func (s *KilnStack) baseURL() *string {
	return awscdk.Fn_Join(jsii.String(""), &[]*string{jsii.String("https://"), s.distribution.DistributionDomainName()})
}
