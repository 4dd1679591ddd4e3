package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

// DeliveryMaxReceiveCount is how many times a delivery message is handed to the deliver function
// before it goes to the dead-letter queue. A delivery's own retries (backoff, attempts) are
// kiln's, kept in the table; these are for the function itself failing (a crash, a timeout).
const DeliveryMaxReceiveCount = 5

// deliverTimeout is the deliver function's time limit: Lambda's maximum, for streaming a 2 GB
// artifact from S3 to a customer's endpoint.
var deliverTimeout = awscdk.Duration_Minutes(jsii.Number(15))

// createQueues defines the delivery queue with its dead-letter queue, and the dead-letter queue
// of the EventBridge targets (the ended and schedule rules). SQS-managed encryption, TLS only.
func (s *KilnStack) createQueues() {
	s.deliveryDLQ = awssqs.NewQueue(s.Stack, jsii.String("DeliveryDeadLetterQueue"), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
	})
	s.queue = awssqs.NewQueue(s.Stack, jsii.String("DeliveryQueue"), &awssqs.QueueProps{
		Encryption: awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL: jsii.Bool(true),
		// AWS's advice for a queue driving a Lambda: six times the function's timeout, so that
		// a message is not handed out again while throttled invocations are retried.
		VisibilityTimeout: awscdk.Duration_Minutes(jsii.Number(6 * 15)),
		// SQS's default, said: a delivery not taken within 4 days is dropped (the dead-letter
		// queue keeps the failed ones 14 days).
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(4)),
		DeadLetterQueue: &awssqs.DeadLetterQueue{Queue: s.deliveryDLQ, MaxReceiveCount: jsii.Number(DeliveryMaxReceiveCount)},
	})
	s.eventsDLQ = awssqs.NewQueue(s.Stack, jsii.String("EventsDeadLetterQueue"), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
	})
}

// createDeliverFunction defines the deliver function: one delivery attempt (auto deploy or an
// organization webhook) per SQS message, batch size 1. It streams the artifact from S3 (read,
// and decrypt through S3) and opens sealed upload headers with the master key.
func (s *KilnStack) createDeliverFunction() {
	f := s.newFunction(functionSpec{
		name: "deliver", description: "kiln deliveries: one attempt per message", memoryMB: 1024,
		timeout: deliverTimeout,
	})
	s.table.GrantReadWriteData(f.role)
	s.masterKey.GrantRead(f.role, nil)
	f.allow([]string{"s3:GetObject"}, s.artifactObjectsArn())
	s.allowArtifactsKey(f, "kms:Decrypt")
	f.fn.AddEventSource(awslambdaeventsources.NewSqsEventSource(s.queue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize: jsii.Number(1),
	}))
}
