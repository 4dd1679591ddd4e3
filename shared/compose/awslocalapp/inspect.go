package awslocalapp

import (
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kilnbuild/kiln/shared/awslocal/ec2hosts"
	"github.com/kilnbuild/kiln/shared/awslocal/meter"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/store/dynamostore"
)

// What an operator (and kiln serve's end-to-end tests on aws-local) may look at in a running
// aws-local, past the API: what in AWS the console or the CLI shows.

// Store is the DynamoDB table as the account's administrator reaches it: not checked against a
// role's policies (as the admin Lambda's writes are not, to an operator).
func (l *AWSLocal) Store() *dynamostore.Store { return l.backend.store }

// S3 is the bucket as the account's administrator reaches it (MinIO with its root user): not
// checked against a role's policies.
func (l *AWSLocal) S3() *s3.Client { return l.backend.s3 }

// Bucket is the bucket of the artifacts and caches.
func (l *AWSLocal) Bucket() string { return l.backend.bucket }

// S3URL is the S3 endpoint the functions use, through the IAM check (presigned URLs point at it).
func (l *AWSLocal) S3URL() string { return l.iam.s3URL }

// StepFunctionsEndpoint is the Step Functions stand-in's own endpoint (DescribeExecution,
// GetExecutionHistory), without the IAM check.
func (l *AWSLocal) StepFunctionsEndpoint() string { return l.machine.Endpoint() }

// HostCredentialParameters are the names of the parameters Parameter Store holds now, sorted.
func (l *AWSLocal) HostCredentialParameters() []string { return l.params.Names() }

// WindowsHostInstances is how many hosted Windows host instances run now (0 without
// Options.EC2HostCommand).
func (l *AWSLocal) WindowsHostInstances() int {
	if l.winHost == nil {
		return 0
	}
	return l.winHost.Instances()
}

// LinuxHostInstances is how many hosted Linux host instances run now (0 without
// Options.EC2HostCommand or Linux hosts in the template).
func (l *AWSLocal) LinuxHostInstances() int {
	if l.linuxHost == nil {
		return 0
	}
	return l.linuxHost.Instances()
}

// EC2HostUID is the uid the agent of a hosted host instance (Windows or Linux) ran as.
func (l *AWSLocal) EC2HostUID(instanceID string) (int, bool) {
	for _, p := range []*ec2hosts.Pool{l.winHost, l.linuxHost} {
		if p == nil {
			continue
		}
		if uid, ok := p.UID(instanceID); ok {
			return uid, true
		}
	}
	return 0, false
}

// MeterReading is everything the meter counted since aws-local started, by principal.
func (l *AWSLocal) MeterReading() meter.Reading { return l.iam.meter.Read() }

// ExecutionsEnded is how many executions have reported their state transitions to the meter.
func (l *AWSLocal) ExecutionsEnded() int { return l.iam.meter.executions() }

// LogWriter is the log writer of the API function's host API, as the API function's role: lines
// appended here are stored and sent to the sockets watching their build, as a host's are.
func (l *AWSLocal) LogWriter() builds.LogWriter { return l.hostLogs }
