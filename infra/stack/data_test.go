package stack_test

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/kilnbuild/kiln/infra/stack"
)

func TestKey(t *testing.T) {
	check(t, func() {
		template.HasResource(jsii.String("AWS::KMS::Key"), obj{
			"DeletionPolicy": "Retain",
			"Properties":     obj{"EnableKeyRotation": true},
		})
	})
}

func TestBucket(t *testing.T) {
	key := logicalID(t, "AWS::KMS::Key")
	rules := []any{
		obj{"Id": "abort-incomplete-uploads", "Status": "Enabled", "AbortIncompleteMultipartUpload": obj{"DaysAfterInitiation": 1}},
		// The default retention (30 days) and the margin.
		obj{"Id": "expire-artifacts-backstop", "Status": "Enabled", "Prefix": "artifacts/", "ExpirationInDays": 30 + stack.ExpiryMarginDays},
	}
	for name, want := range map[string]any{
		"BucketEncryption": obj{"ServerSideEncryptionConfiguration": []any{obj{
			"BucketKeyEnabled": true,
			"ServerSideEncryptionByDefault": assertions.Match_ObjectEquals(&obj{
				"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": arnOf(key),
			}),
		}}},
		"PublicAccessBlockConfiguration": assertions.Match_ObjectEquals(&obj{
			"BlockPublicAcls": true, "BlockPublicPolicy": true, "IgnorePublicAcls": true, "RestrictPublicBuckets": true,
		}),
		"LifecycleConfiguration": obj{"Rules": assertions.Match_ArrayEquals(&rules)},
		"BucketName":             assertions.Match_Absent(),
	} {
		t.Run(name, func(t *testing.T) {
			check(t, func() { template.HasResourceProperties(jsii.String("AWS::S3::Bucket"), obj{name: want}) })
		})
	}
	t.Run("retained", func(t *testing.T) {
		check(t, func() { template.HasResource(jsii.String("AWS::S3::Bucket"), obj{"DeletionPolicy": "Retain"}) })
	})
	t.Run("TLS only", func(t *testing.T) {
		bucket := logicalID(t, "AWS::S3::Bucket")
		statements := []any{obj{
			"Effect":    "Deny",
			"Principal": obj{"AWS": "*"},
			"Action":    "s3:*",
			"Condition": obj{"Bool": obj{"aws:SecureTransport": "false"}},
			"Resource":  []any{arnOf(bucket), obj{"Fn::Join": []any{"", []any{arnOf(bucket), "/*"}}}},
		}}
		check(t, func() {
			template.HasResourceProperties(jsii.String("AWS::S3::BucketPolicy"), obj{
				"Bucket":         ref(bucket),
				"PolicyDocument": obj{"Statement": assertions.Match_ArrayWith(&statements)},
			})
		})
	})
}

func TestSecrets(t *testing.T) {
	key := logicalID(t, "AWS::KMS::Key")
	for _, tc := range []struct {
		id       string
		generate obj
	}{
		{"MasterKey", obj{"PasswordLength": 64, "ExcludePunctuation": true, "IncludeSpace": false}},
		{"GitHubApp", obj{
			"SecretStringTemplate": `{"privateKey":""}`, "GenerateStringKey": "webhookSecret",
			"PasswordLength": 40, "ExcludePunctuation": true, "IncludeSpace": false,
		}},
	} {
		t.Run(tc.id, func(t *testing.T) {
			r := resources(t, "AWS::SecretsManager::Secret")[secretID(t, tc.id)]
			if r["DeletionPolicy"] != "Retain" {
				t.Errorf("DeletionPolicy %v, want Retain", r["DeletionPolicy"])
			}
			check(t, func() {
				template.HasResourceProperties(jsii.String("AWS::SecretsManager::Secret"), obj{
					"GenerateSecretString": assertions.Match_ObjectEquals(&tc.generate),
					"KmsKeyId":             arnOf(key),
				})
			})
		})
	}
}
