package stack_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// nagged are the stacks TestMain checked with cdk-nag's AwsSolutionsChecks.
var nagged = map[string]awscdk.Stack{}

// TestCDKNag: cdk-nag's AWS Solutions rules report no error on either stack that is not
// suppressed in the stack's code with its reason (nag.go).
func TestCDKNag(t *testing.T) {
	if len(nagged) == 0 {
		t.Fatal("no stack was checked")
	}
	for name, st := range nagged {
		errs := assertions.Annotations_FromStack(st).FindError(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*")))
		for _, e := range *errs {
			t.Errorf("%s %s: %v", name, *e.Id, fmt.Sprint(e.Entry.Data))
		}
	}
}

// TestWildcardSuppressions: cdk-nag's AwsSolutions-IAM5 (wildcards in a policy) is suppressed on
// no stack as a whole, only on the roles' policies, one wildcard at a time: each suppression names
// (applies_to) a wildcard resource its policy has, as cdk-nag spells it, and says why. The host
// credential parameters (parameter/<stack>/hosts/*) and the host groups (autoScalingGroup:*) are
// among them.
func TestWildcardSuppressions(t *testing.T) {
	for name, tmpl := range map[string]assertions.Template{"Test": template, "Other": other, "Hosts": hosts} {
		t.Run(name, func(t *testing.T) {
			var doc obj
			check(t, func() { doc = *tmpl.ToJSON() })
			for _, rule := range nagRules(doc["Metadata"]) {
				if rule["id"] == "AwsSolutions-IAM5" {
					t.Errorf("AwsSolutions-IAM5 suppressed for the whole stack: %s", jsonString(rule))
				}
			}
			var named []string
			for id, r := range doc["Resources"].(obj) {
				r := r.(obj)
				for _, rule := range nagRules(r["Metadata"]) {
					if rule["id"] != "AwsSolutions-IAM5" {
						continue
					}
					applies := asList(rule["applies_to"])
					if r["Type"] != "AWS::IAM::Policy" && r["Type"] != "AWS::IAM::Role" {
						t.Errorf("%s (%s): an IAM5 suppression on no policy", id, r["Type"])
					}
					if len(applies) != 1 || len(rule["reason"].(string)) < 20 {
						t.Errorf("%s: an IAM5 suppression not naming one wildcard with its reason: %s", id, jsonString(rule))
						continue
					}
					named = append(named, applies[0].(string))
					if r["Type"] != "AWS::IAM::Policy" {
						continue
					}
					if have := policyWildcards(r["Properties"].(obj)["PolicyDocument"]); !slices.Contains(have, applies[0].(string)) {
						t.Errorf("%s: suppressed %s, which its policy does not have (it has %v)", id, applies[0], have)
					}
				}
			}
			if name != "Hosts" {
				return
			}
			for _, want := range []string{
				"Resource::arn:<AWS::Partition>:ssm:<AWS::Region>:<AWS::AccountId>:parameter/Hosts/hosts/*",
				"Resource::arn:<AWS::Partition>:autoscaling:<AWS::Region>:<AWS::AccountId>:autoScalingGroup:*:autoScalingGroupName/<AWS::StackName>-windows-hosts",
				"Resource::arn:<AWS::Partition>:autoscaling:<AWS::Region>:<AWS::AccountId>:autoScalingGroup:*:autoScalingGroupName/<AWS::StackName>-linux-hosts",
			} {
				if !slices.Contains(named, want) {
					t.Errorf("no IAM5 suppression names %s", want)
				}
			}
		})
	}
}

// nagRules are the cdk-nag suppressions of a Metadata value.
func nagRules(metadata any) []obj {
	m, _ := metadata.(obj)
	nag, _ := m["cdk_nag"].(obj)
	var out []obj
	for _, r := range asList(nag["rules_to_suppress"]) {
		out = append(out, r.(obj))
	}
	return out
}

// policyWildcards are the wildcard resources of a policy document's Allow statements as cdk-nag
// spells them in IAM5's findings ("Resource::" and the resource, each Ref and Fn::GetAtt as
// <Id> and <Id.Attr>).
func policyWildcards(doc any) []string {
	var out []string
	for _, s := range asList(doc.(obj)["Statement"]) {
		s := s.(obj)
		if s["Effect"] != "Allow" {
			continue
		}
		for _, r := range asList(s["Resource"]) {
			if rendered := nagString(r); strings.Contains(rendered, "*") {
				out = append(out, "Resource::"+rendered)
			}
		}
	}
	return out
}

func nagString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case obj:
		if ref, ok := v["Ref"].(string); ok {
			return "<" + ref + ">"
		}
		if att, ok := v["Fn::GetAtt"].([]any); ok {
			return "<" + att[0].(string) + "." + att[1].(string) + ">"
		}
		if join, ok := v["Fn::Join"].([]any); ok {
			var parts []string
			for _, p := range asList(join[1]) {
				parts = append(parts, nagString(p))
			}
			return strings.Join(parts, join[0].(string))
		}
	}
	return jsonString(v)
}
