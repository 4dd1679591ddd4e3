// Package stack is kiln's AWS deployment as a CDK stack: the DynamoDB table, the master key
// secret, the API Lambda and the HTTP API in front of it.
package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// DefaultAPIAssetDir is where `make lambdas` writes the API Lambda's bootstrap binary, relative
// to the repository root (where the CDK CLI runs the app).
const DefaultAPIAssetDir = "bin/lambda/api"

// Props configures the stack.
type Props struct {
	awscdk.StackProps
	// APIAssetDir is the directory holding the API Lambda's `bootstrap` executable (Linux arm64).
	// Empty means DefaultAPIAssetDir.
	APIAssetDir string
}

// KilnStack is the stack being built: each createX method adds resources and keeps those the
// later ones refer to.
type KilnStack struct {
	awscdk.Stack
	props Props

	table       awsdynamodb.Table
	masterKey   awssecretsmanager.Secret
	apiFunction awslambda.Function
	httpAPI     awsapigatewayv2.HttpApi
}

// New defines kiln's stack in scope.
func New(scope constructs.Construct, id string, props Props) awscdk.Stack {
	if props.APIAssetDir == "" {
		props.APIAssetDir = DefaultAPIAssetDir
	}
	s := &KilnStack{
		Stack: awscdk.NewStack(scope, jsii.String(id), &props.StackProps),
		props: props,
	}
	s.createTable()
	s.createMasterKey()
	s.createAPIFunction()
	s.createHTTPAPI()
	s.createOutputs()
	return s.Stack
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

// createMasterKey defines the secret the API Lambda derives its keyring from
// (keyring.FromSecretString: a string of 32 or more characters is hashed into the 32-byte master
// key). CloudFormation cannot generate random bytes, so the secret is a 64-character alphanumeric
// string. It is retained with the table: without it, the sealed values stored there are lost.
func (s *KilnStack) createMasterKey() {
	s.masterKey = awssecretsmanager.NewSecret(s.Stack, jsii.String("MasterKey"), &awssecretsmanager.SecretProps{
		Description: jsii.String("kiln master key: the API derives its encryption and signing keys from it"),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			PasswordLength:     jsii.Number(64),
			ExcludePunctuation: jsii.Bool(true),
			IncludeSpace:       jsii.Bool(false),
		},
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
}

// createAPIFunction defines the API Lambda (functions/api): the kiln HTTP API on the table.
func (s *KilnStack) createAPIFunction() {
	logs := awslogs.NewLogGroup(s.Stack, jsii.String("APIFunctionLogs"), &awslogs.LogGroupProps{
		Retention: awslogs.RetentionDays_ONE_MONTH,
	})
	s.apiFunction = awslambda.NewFunction(s.Stack, jsii.String("APIFunction"), &awslambda.FunctionProps{
		Description:  jsii.String("kiln API"),
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: awslambda.Architecture_ARM_64(),
		Handler:      jsii.String("bootstrap"),
		Code:         awslambda.Code_FromAsset(jsii.String(s.props.APIAssetDir), nil),
		MemorySize:   jsii.Number(512),
		// API Gateway gives up on an integration after 30 seconds.
		Timeout:  awscdk.Duration_Seconds(jsii.Number(29)),
		LogGroup: logs,
		Environment: &map[string]*string{
			"KILN_DYNAMODB_TABLE":        s.table.TableName(),
			"KILN_MASTER_KEY_SECRET_ARN": s.masterKey.SecretArn(),
		},
	})
	s.table.GrantReadWriteData(s.apiFunction)
	s.masterKey.GrantRead(s.apiFunction, nil)
}

// createHTTPAPI defines the HTTP API sending every request ($default route) to the API Lambda
// with the 2.0 payload format.
func (s *KilnStack) createHTTPAPI() {
	integration := awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String("APIIntegration"), s.apiFunction,
		&awsapigatewayv2integrations.HttpLambdaIntegrationProps{
			PayloadFormatVersion: awsapigatewayv2.PayloadFormatVersion_VERSION_2_0(),
		})
	s.httpAPI = awsapigatewayv2.NewHttpApi(s.Stack, jsii.String("HttpAPI"), &awsapigatewayv2.HttpApiProps{
		ApiName:            jsii.String("kiln"),
		Description:        jsii.String("kiln build service API"),
		DefaultIntegration: integration,
	})
}

// createOutputs exports what operators and scripts need after a deploy.
func (s *KilnStack) createOutputs() {
	awscdk.NewCfnOutput(s.Stack, jsii.String("ApiUrl"), &awscdk.CfnOutputProps{
		Description: jsii.String("base URL of the kiln API"),
		Value:       s.httpAPI.Url(),
	})
	awscdk.NewCfnOutput(s.Stack, jsii.String("TableName"), &awscdk.CfnOutputProps{
		Description: jsii.String("DynamoDB table holding kiln's state"),
		Value:       s.table.TableName(),
	})
	awscdk.NewCfnOutput(s.Stack, jsii.String("MasterKeySecretArn"), &awscdk.CfnOutputProps{
		Description: jsii.String("Secrets Manager secret holding the master key"),
		Value:       s.masterKey.SecretArn(),
	})
}
