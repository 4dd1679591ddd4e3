package awslocalapp

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/artifacts/s3artifacts"
	"github.com/kilnbuild/kiln/shared/awscost"
	"github.com/kilnbuild/kiln/shared/awslocal/iam"
	"github.com/kilnbuild/kiln/shared/awslocal/minio"
	"github.com/kilnbuild/kiln/shared/awslocal/repodeps"
	"github.com/kilnbuild/kiln/shared/hostedhosts"
	"github.com/kilnbuild/kiln/shared/settings"
	"github.com/kilnbuild/kiln/shared/store/dynamostore"
)

// TemplateEnv names the synthesized template whose IAM policies aws-local enforces;
// without it, cdk.out/Kiln.template.json of the repository (`make synth`).
var TemplateEnv = settings.AWSLocalTemplate.Name

// awsLocalEventsKey is the access key id of EventBridge invoking the ended function: a service
// acting on the function's resource-based permission, not checked against a role.
const awsLocalEventsKey = "AKIALOCALEVENTS"

// awsLocalKey is the access key id a principal (a function's name, iam.StateMachinePrincipal,
// iam.CodeBuildPrincipal, iam.EC2HostPrincipal) signs its calls with.
func awsLocalKey(principal string) string { return "AKIALOCAL" + strings.ToUpper(principal) }

// awsLocalSession is the role session a principal's calls are made in, as AWS names it.
func awsLocalSession(principal string) string {
	switch principal {
	case iam.StateMachinePrincipal:
		return "kiln-builds-execution"
	case iam.CodeBuildPrincipal:
		return "AWSCodeBuild-local"
	case iam.EC2HostPrincipal, iam.EC2LinuxHostPrincipal:
		return "i-local"
	}
	return principal // Lambda names the session after the function
}

// awsLocalTemplatePath is where aws-local reads the stack's policies.
func awsLocalTemplatePath(o Options) (string, error) {
	if o.Template != "" {
		return o.Template, nil
	}
	if p := settings.AWSLocalTemplate.Get(os.Getenv); p != "" {
		return p, nil
	}
	p := "cdk.out/Kiln.template.json"
	if root, err := repodeps.Root(); err == nil {
		p = root + "/" + p
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("aws-local enforces the IAM policies of the deployed stack and reads them from its synthesized template: %s is missing; run `make synth` (or `make lambdas && go run ./infra`) or set %s: %w", p, TemplateEnv, err)
	}
	return p, nil
}

// awsIAM is the IAM check of aws-local: the template's roles by access key id, and the proxies
// that check every call to DynamoDB Local and MinIO.
type awsIAM struct {
	auth      *iam.Authorizer
	meter     *awsMeter // every checked call, priced
	dynamoURL string
	s3URL     string
	// table and bucket are aws-local's own.
	table, bucket string
}

// startIAM reads the template and puts the checking proxies in front of the data services.
func (l *AWSLocal) startIAM(o Options) (*awsIAM, error) {
	path, err := awsLocalTemplatePath(o)
	if err != nil {
		return nil, err
	}
	t, err := iam.LoadTemplate(path, iam.Names{Region: Region, Account: awsLocalAccount, Table: l.backend.table, Bucket: l.backend.bucket,
		Queue: "kiln-deliveries", StateMachine: "kiln-builds", HostProject: awsLocalHostProject, WindowsGroup: awsLocalWindowsGroup,
		LinuxGroup: awsLocalLinuxGroup, LiveAPI: awsLocalLiveAPI})
	if err != nil {
		return nil, err
	}
	l.logger.Info("aws-local IAM: every AWS call is checked against the template's identity policies; resource-based policies, SCPs and permission boundaries are not evaluated",
		slog.String("template", path))
	auth, err := iam.NewAuthorizer(t, awsLocalKey, awsLocalSession, l.logger)
	if err != nil {
		return nil, fmt.Errorf("aws-local IAM: %s: %w", path, err)
	}
	auth.Trust("events.amazonaws.com", awsLocalEventsKey)
	p := &awsIAM{auth: auth, table: l.backend.table, bucket: l.backend.bucket}
	if p.meter, err = newAWSMeter(auth, t, l.logger); err != nil {
		return nil, fmt.Errorf("aws-local meter: %s: %w", path, err)
	}
	dynamo, err := iam.Proxy(l.backend.dynamo.Endpoint, l.backend.dynamo.HTTPClient().Transport)
	if err != nil {
		return nil, err
	}
	dynamoURL, serveDynamo, err := l.listen()
	if err != nil {
		return nil, err
	}
	serveDynamo(&iam.Guard{Auth: auth, Service: iam.DynamoDB{ARNs: awsLocalARNs}, Next: p.meter.DynamoDB(p.meter.who, dynamo), Logger: l.logger})
	p.dynamoURL = dynamoURL
	target, err := url.Parse(l.backend.minio.Endpoint)
	if err != nil {
		return nil, err
	}
	bucketKey, err := t.BucketKey(l.backend.bucket)
	if err != nil {
		return nil, fmt.Errorf("aws-local IAM: %s: the bucket's key: %w", path, err)
	}
	s3URL, serveS3, err := l.listen()
	if err != nil {
		return nil, err
	}
	serveS3(&iam.S3Proxy{Auth: auth, Target: target, Region: minio.Region, Logger: l.logger,
		KMS:         iam.S3KMS{Bucket: l.backend.bucket, KeyARN: bucketKey, Region: Region, Account: awsLocalAccount},
		Meter:       func(next http.Handler) http.Handler { return p.meter.S3(p.meter.who, next) },
		Credentials: aws.Credentials{AccessKeyID: l.backend.minio.User, SecretAccessKey: l.backend.minio.Password}})
	p.s3URL = s3URL
	return p, nil
}

var awsLocalARNs = iam.ARNs{Region: Region, Account: awsLocalAccount}

// credentialsOf are a principal's credentials (its access key id; the secret is not checked).
func credentialsOf(principal string) aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider(awsLocalKey(principal), "aws-local", "")
}

// awsConfigOf is the SDK configuration a principal's clients are made of.
func awsConfigOf(principal string) aws.Config {
	return aws.Config{Region: Region, Credentials: credentialsOf(principal)}
}

// dbOf is a principal's DynamoDB, through the checking proxy, signed with its key.
func (p *awsIAM) dbOf(principal string) *dynamo.DB {
	return dynamo.New(aws.Config{Region: Region, BaseEndpoint: aws.String(p.dynamoURL), Credentials: credentialsOf(principal)})
}

// dataOf are a principal's store, logs and artifacts: DynamoDB and S3 through the checking
// proxies, signed with its key.
func (p *awsIAM) dataOf(principal string, artifactMax int64) (*dynamostore.Store, *dynamostore.Logs, *s3artifacts.Store, error) {
	db := p.dbOf(principal)
	client := s3.New(s3.Options{Region: minio.Region, BaseEndpoint: aws.String(p.s3URL), UsePathStyle: true, Credentials: credentialsOf(principal)})
	arts, err := s3artifacts.FromURL(client, artifactsURL(p.bucket), artifactMax)
	if err != nil {
		return nil, nil, nil, err
	}
	return dynamostore.New(db, p.table), dynamostore.NewLogs(db, p.table), arts, nil
}

// hostAWSEnv is what a build host's environment gives the AWS SDK: its role's key and the
// checked endpoints, so a call it makes is authorized as its role's.
func (p *awsIAM) hostAWSEnv(principal string, endpoints map[string]string) []string {
	env := []string{"AWS_ACCESS_KEY_ID=" + awsLocalKey(principal), "AWS_SECRET_ACCESS_KEY=aws-local", "AWS_REGION=" + Region,
		"AWS_ENDPOINT_URL_DYNAMODB=" + p.dynamoURL, "AWS_ENDPOINT_URL_S3=" + p.s3URL}
	for service, u := range endpoints {
		env = append(env, "AWS_ENDPOINT_URL_"+service+"="+u)
	}
	return env
}

// checkedCloudWatch is the metric stand-in behind a principal's cloudwatch:PutMetricData check.
type checkedCloudWatch struct {
	next      hostedhosts.CloudWatch
	auth      *iam.Authorizer
	principal string
	meter     *awsMeter
	logger    *slog.Logger
}

func (c checkedCloudWatch) PutMetricData(ctx context.Context, in *cloudwatch.PutMetricDataInput, opts ...func(*cloudwatch.Options)) (*cloudwatch.PutMetricDataOutput, error) {
	if err := c.auth.Authorize(awsLocalKey(c.principal), iam.Call{Action: "cloudwatch:PutMetricData", Resource: "*",
		Context: map[string]string{"cloudwatch:namespace": aws.ToString(in.Namespace)}}); err != nil {
		if c.logger != nil {
			c.logger.Warn(iam.RefusedMessage, slog.String("action", "cloudwatch:PutMetricData"), slog.String("error", err.Error()))
		}
		return nil, fmt.Errorf("operation error CloudWatch: PutMetricData, api error AccessDenied: %w", err)
	}
	if c.meter != nil {
		c.meter.Add(c.principal, "cloudwatch:PutMetricData", awscost.Usage{CloudWatchRequests: 1})
	}
	return c.next.PutMetricData(ctx, in, opts...)
}
