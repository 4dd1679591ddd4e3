package iam

import (
	"testing"
)

// TestConditionOnAbsentKeys: a condition on a key the request does not set is not met, except a
// negated operator's (true), ...IfExists (true), Null true (true) and ForAllValues (true), as
// AWS's "IAM JSON policy elements: Condition operators" says; on a key the request sets, each
// operator compares as AWS does.
func TestConditionOnAbsentKeys(t *testing.T) {
	for _, tt := range []struct {
		name      string
		op, key   string
		values    []string
		ctx       map[string]string
		held      bool
		evaluated bool // false: an operator taken as holding where the key is set
	}{
		{"StringLike, key absent", "StringLike", "s3:prefix", []string{"artifacts/*"}, nil, false, true},
		{"StringLike, key set, matching", "StringLike", "s3:prefix", []string{"artifacts/*"}, map[string]string{"s3:prefix": "artifacts/o/b"}, true, true},
		{"StringLike, key set, other", "StringLike", "s3:prefix", []string{"artifacts/*"}, map[string]string{"s3:prefix": "other/"}, false, true},
		{"StringLike, empty value set", "StringLike", "s3:prefix", []string{"artifacts/*"}, map[string]string{"s3:prefix": ""}, false, true},
		{"StringEquals, key absent", "StringEquals", "kms:ViaService", []string{"s3.us-east-1.amazonaws.com"}, map[string]string{"kms:callerAccount": "0"}, false, true},
		{"StringEquals, key set", "StringEquals", "kms:ViaService", []string{"s3.us-east-1.amazonaws.com"}, map[string]string{"kms:viaservice": "s3.us-east-1.amazonaws.com"}, true, true},
		{"key names fold case", "StringEquals", "cloudwatch:Namespace", []string{"kiln"}, map[string]string{"cloudwatch:namespace": "kiln"}, true, true},
		{"values do not fold case", "StringEquals", "cloudwatch:namespace", []string{"kiln"}, map[string]string{"cloudwatch:namespace": "Kiln"}, false, true},
		{"StringEqualsIgnoreCase", "StringEqualsIgnoreCase", "cloudwatch:namespace", []string{"kiln"}, map[string]string{"cloudwatch:namespace": "Kiln"}, true, true},
		{"ArnLike, key absent", "ArnLike", "aws:SourceArn", []string{"arn:aws:events:*"}, nil, false, true},
		{"Bool, key absent", "Bool", "aws:SecureTransport", []string{"true"}, nil, false, true},
		{"Bool, key set", "Bool", "aws:SecureTransport", []string{"true"}, map[string]string{"aws:securetransport": "TRUE"}, true, true},
		{"StringNotEquals, key absent", "StringNotEquals", "aws:PrincipalTag/team", []string{"a"}, nil, true, true},
		{"StringNotEquals, key set, equal", "StringNotEquals", "aws:PrincipalTag/team", []string{"a"}, map[string]string{"aws:principaltag/team": "a"}, false, true},
		{"StringNotLike, key absent", "StringNotLike", "s3:prefix", []string{"secret/*"}, nil, true, true},
		{"ArnNotLike, key absent", "ArnNotLike", "aws:SourceArn", []string{"arn:aws:sns:*"}, nil, true, true},
		{"NotIpAddress, key absent", "NotIpAddress", "aws:SourceIp", []string{"10.0.0.0/8"}, nil, true, true},
		{"NumericLessThan, key absent", "NumericLessThan", "s3:max-keys", []string{"10"}, nil, false, true},
		{"NumericLessThan, key set: not evaluated", "NumericLessThan", "s3:max-keys", []string{"10"}, map[string]string{"s3:max-keys": "100"}, false, false},
		{"StringLikeIfExists, key absent", "StringLikeIfExists", "s3:prefix", []string{"artifacts/*"}, nil, true, true},
		{"StringLikeIfExists, key set, other", "StringLikeIfExists", "s3:prefix", []string{"artifacts/*"}, map[string]string{"s3:prefix": "other/"}, false, true},
		{"StringEqualsIfExists, key set", "StringEqualsIfExists", "kms:ViaService", []string{"s3.us-east-1.amazonaws.com"}, map[string]string{"kms:viaservice": "s3.us-east-1.amazonaws.com"}, true, true},
		{"Null true, key absent", "Null", "aws:TokenIssueTime", []string{"true"}, nil, true, true},
		{"Null true, key set", "Null", "aws:TokenIssueTime", []string{"true"}, map[string]string{"aws:tokenissuetime": "x"}, false, true},
		{"Null false, key absent", "Null", "aws:TokenIssueTime", []string{"false"}, nil, false, true},
		{"Null false, key set", "Null", "aws:TokenIssueTime", []string{"false"}, map[string]string{"aws:tokenissuetime": "x"}, true, true},
		{"ForAllValues, key absent", "ForAllValues:StringLike", "aws:TagKeys", []string{"kiln-*"}, nil, true, true},
		{"ForAnyValue, key absent", "ForAnyValue:StringLike", "aws:TagKeys", []string{"kiln-*"}, nil, false, true},
		{"ForAnyValue, key set", "ForAnyValue:StringLike", "aws:TagKeys", []string{"kiln-*"}, map[string]string{"aws:tagkeys": "kiln-org"}, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			held, known := conditionHolds(tt.op, tt.key, tt.values, tt.ctx)
			if known != tt.evaluated || (known && held != tt.held) {
				t.Fatalf("conditionHolds(%s %s %v, %v) = %v (evaluated %v), want %v (evaluated %v)", tt.op, tt.key, tt.values, tt.ctx, held, known, tt.held, tt.evaluated)
			}
		})
	}
}

// TestStatementConditions: a statement whose condition's key the call does not set allows
// nothing; an ...IfExists one still allows; a deny whose condition's key is absent denies
// nothing, and one with a negated operator denies.
func TestStatementConditions(t *testing.T) {
	const bucket = "arn:aws:s3:::b"
	listing := func(op, prefix string) Statement {
		return Statement{Actions: []string{"s3:ListBucket"}, Resources: []string{bucket},
			Condition: map[string]map[string][]string{op: {"s3:prefix": {prefix}}}}
	}
	deny := func(s Statement) Statement { s.Deny = true; return s }
	grant := Statement{Actions: []string{"s3:ListBucket"}, Resources: []string{bucket}}
	noPrefix := Call{Action: "s3:ListBucket", Resource: bucket}
	withPrefix := func(p string) Call {
		return Call{Action: "s3:ListBucket", Resource: bucket, Context: map[string]string{"s3:prefix": p}}
	}
	for _, tt := range []struct {
		name       string
		statements []Statement
		call       Call
		want       decision
	}{
		{"limited listing, no prefix (HeadBucket)", []Statement{listing("StringLike", "artifacts/*")}, noPrefix, implicitDeny},
		{"limited listing, its prefix", []Statement{listing("StringLike", "artifacts/*")}, withPrefix("artifacts/caches/"), allowed},
		{"limited listing, another prefix", []Statement{listing("StringLike", "artifacts/*")}, withPrefix("logs/"), implicitDeny},
		{"IfExists listing, no prefix", []Statement{listing("StringLikeIfExists", "artifacts/*")}, noPrefix, allowed},
		{"deny on a prefix, no prefix", []Statement{grant, deny(listing("StringLike", "secret/*"))}, noPrefix, allowed},
		{"deny on a prefix, that prefix", []Statement{grant, deny(listing("StringLike", "secret/*"))}, withPrefix("secret/x"), explicitDeny},
		{"deny outside a prefix, no prefix", []Statement{grant, deny(listing("StringNotLike", "artifacts/*"))}, noPrefix, explicitDeny},
		{"deny outside a prefix, inside", []Statement{grant, deny(listing("StringNotLike", "artifacts/*"))}, withPrefix("artifacts/o/"), allowed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := evaluate(tt.statements, tt.call); got != tt.want {
				t.Fatalf("evaluate = %v, want %v", got, tt.want)
			}
		})
	}
}
