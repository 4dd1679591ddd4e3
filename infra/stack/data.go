package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/jsii-runtime-go"
)

// ArtifactsPrefix is the key prefix of the artifacts in the bucket (KILN_ARTIFACTS is
// s3://<bucket>/<ArtifactsPrefix>); the functions' S3 grants are scoped to it.
const ArtifactsPrefix = "artifacts"

// ExpiryMarginDays is how long after the retention period the bucket's lifecycle rule deletes an
// artifact object the janitor missed.
const ExpiryMarginDays = 7

// createKey defines the stack's KMS key: it encrypts the artifacts and the secrets. It is
// retained with the data it encrypts.
func (s *KilnStack) createKey() {
	s.key = awskms.NewKey(s.Stack, jsii.String("Key"), &awskms.KeyProps{
		Description:       jsii.String("kiln: encrypts the artifacts bucket and the secrets"),
		EnableKeyRotation: jsii.Bool(true),
		RemovalPolicy:     awscdk.RemovalPolicy_RETAIN,
	})
}

// gsiNames are the table's global secondary indexes; index X is keyed by XPK (hash) and XSK
// (range), both strings (see docs/dynamodb.md and shared/store/dynamostore/table.go).
var gsiNames = []string{"GSI1", "GSI2", "GSI3", "GSI4"}

// createTable defines the single table holding all of kiln's state. It is retained when the
// stack is deleted.
func (s *KilnStack) createTable() {
	s.table = awsdynamodb.NewTable(s.Stack, jsii.String("Table"), &awsdynamodb.TableProps{
		PartitionKey: stringKey("PK"),
		SortKey:      stringKey("SK"),
		BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
		Encryption:   awsdynamodb.TableEncryption_AWS_MANAGED,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
		// Items with a ttl (used single-use keys such as GitHub install states) expire by
		// themselves once no longer needed.
		TimeToLiveAttribute: jsii.String("ttl"),
	})
	for _, name := range gsiNames {
		s.table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
			IndexName:      jsii.String(name),
			PartitionKey:   stringKey(name + "PK"),
			SortKey:        stringKey(name + "SK"),
			ProjectionType: awsdynamodb.ProjectionType_ALL,
		})
	}
}

func stringKey(name string) *awsdynamodb.Attribute {
	return &awsdynamodb.Attribute{Name: jsii.String(name), Type: awsdynamodb.AttributeType_STRING}
}

// createSecrets defines the two secrets, encrypted with the stack's key and retained with the
// table (without the master key, the sealed values stored there are lost):
//   - the master key the functions derive their keyring from (keyring.FromSecretString: a string
//     of 32 or more characters is hashed into the 32-byte master key). CloudFormation cannot
//     generate random bytes, so it is a 64-character alphanumeric string;
//   - the GitHub App's {"privateKey","webhookSecret"}: the webhook secret is generated, the
//     operator puts the App's private key in (docs/deploy.md).
func (s *KilnStack) createSecrets() {
	s.masterKey = awssecretsmanager.NewSecret(s.Stack, jsii.String("MasterKey"), &awssecretsmanager.SecretProps{
		Description:   jsii.String("kiln master key: the functions derive their encryption and signing keys from it"),
		EncryptionKey: s.key,
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			PasswordLength:     jsii.Number(64),
			ExcludePunctuation: jsii.Bool(true),
			IncludeSpace:       jsii.Bool(false),
		},
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	s.githubApp = awssecretsmanager.NewSecret(s.Stack, jsii.String("GitHubApp"), &awssecretsmanager.SecretProps{
		Description:   jsii.String(`kiln GitHub App: {"privateKey": the App's PEM key, "webhookSecret": the App's webhook secret}`),
		EncryptionKey: s.key,
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			SecretStringTemplate: jsii.String(`{"privateKey":""}`),
			GenerateStringKey:    jsii.String("webhookSecret"),
			PasswordLength:       jsii.Number(40),
			ExcludePunctuation:   jsii.Bool(true),
			IncludeSpace:         jsii.Bool(false),
		},
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
}

// createBucket defines the artifacts bucket: private, SSE-KMS with the stack's key (an S3 Bucket
// Key keeps the KMS requests per object few), reachable over TLS only, retained.
//
// Retention: the schedule function's daily janitor deletes an expired artifact's record and its
// object together, so the API never lists an artifact whose object is gone (an S3 lifecycle rule
// alone would delete objects behind the records' back). The lifecycle rule below is only the
// backstop for objects the janitor missed (a record deleted by hand, a failed delete): it expires
// them ExpiryMarginDays after the retention period. It also aborts multipart uploads a host left
// incomplete (a host that died mid-upload) after a day, so their parts stop costing storage.
func (s *KilnStack) createBucket() {
	s.bucket = awss3.NewBucket(s.Stack, jsii.String("Artifacts"), &awss3.BucketProps{
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		Encryption:        awss3.BucketEncryption_KMS,
		EncryptionKey:     s.key,
		BucketKeyEnabled:  jsii.Bool(true),
		EnforceSSL:        jsii.Bool(true),
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		RemovalPolicy:     awscdk.RemovalPolicy_RETAIN,
		LifecycleRules: &[]*awss3.LifecycleRule{
			{
				Id:                                  jsii.String("abort-incomplete-uploads"),
				AbortIncompleteMultipartUploadAfter: awscdk.Duration_Days(jsii.Number(1)),
			},
			{
				Id:         jsii.String("expire-artifacts-backstop"),
				Prefix:     jsii.String(ArtifactsPrefix + "/"),
				Expiration: awscdk.Duration_Days(jsii.Number(float64(s.props.ArtifactRetentionDays + ExpiryMarginDays))),
			},
		},
	})
}

// artifactsURL is KILN_ARTIFACTS: s3://<bucket>/<prefix>.
func (s *KilnStack) artifactsURL() *string {
	return awscdk.Fn_Join(jsii.String(""), &[]*string{jsii.String("s3://"), s.bucket.BucketName(), jsii.String("/" + ArtifactsPrefix)})
}

// artifactObjectsArn is the ARN of every object under the artifacts prefix.
func (s *KilnStack) artifactObjectsArn() *string {
	return s.bucket.ArnForObjects(jsii.String(ArtifactsPrefix + "/*"))
}
