package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

// DeliveryMaxReceiveCount is how many times a delivery message is handed to the deliver function
// before SQS moves it to the dead-letter queue. Each receive is one attempt of the delivery
// (KILN_DELIVERY_ATTEMPTS, 5 by default, must not exceed it): a failed attempt is reported as a
// batch item failure with the message hidden for its backoff (ChangeMessageVisibility), and a
// delivery that failed for good is reported failed until SQS moves it on. A crash or a timeout
// of the function counts as a receive too.
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
// organization webhook) per SQS message, batch size 1, with partial batch responses
// (ReportBatchItemFailures: without it Lambda ignores the failures the handler reports and
// deletes the message, so a retry would wait for the schedule's tick and nothing would reach the
// dead-letter queue). It streams the artifact from S3 (read, and decrypt through S3), opens
// sealed upload headers with the master key, and sends to the queue: a sweep message fans out
// into one message per due delivery.
func (s *KilnStack) createDeliverFunction() {
	f := s.newFunction(functionSpec{
		name: "deliver", description: "kiln deliveries: one attempt per message", memoryMB: 1024,
		timeout: deliverTimeout,
	})
	s.table.GrantReadWriteData(f.role)
	s.masterKey.GrantRead(f.role, nil)
	f.allow([]string{"s3:GetObject"}, s.artifactObjectsArn())
	s.allowArtifactsKey(f, "kms:Decrypt")
	s.queue.GrantSendMessages(f.role)
	f.fn.AddEventSource(awslambdaeventsources.NewSqsEventSource(s.queue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(1),
		ReportBatchItemFailures: jsii.Bool(true),
	}))
}
