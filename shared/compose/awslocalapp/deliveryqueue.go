package awslocalapp

import (
	"cmp"
	"fmt"
	"log/slog"
	"os"

	"github.com/kilnbuild/kiln/shared/awslocal/sqs"
	"github.com/kilnbuild/kiln/shared/delivery"
)

// deliverySource reads the deliver function's SQS event source from the template: batch size,
// ReportBatchItemFailures, the queue's visibility timeout and its redrive policy. It warns when a
// delivery has more attempts (KILN_DELIVERY_ATTEMPTS) than the queue's maxReceiveCount.
func deliverySource(templatePath string, attempts int, logger *slog.Logger) (sqs.EventSource, error) {
	data, err := os.ReadFile(templatePath)
	if err != nil {
		return sqs.EventSource{}, fmt.Errorf("aws-local: the delivery queue: %w", err)
	}
	src, err := sqs.EventSourceOf(data, "DeliverFunction")
	if err != nil {
		return sqs.EventSource{}, fmt.Errorf("aws-local: the delivery queue: %s: %w", templatePath, err)
	}
	if attempts = cmp.Or(attempts, delivery.DefaultAttempts); src.MaxReceives > 0 && attempts > src.MaxReceives {
		logger.Warn("aws-local: KILN_DELIVERY_ATTEMPTS is more than the delivery queue's maxReceiveCount: a delivery's message reaches the dead-letter queue before its last attempt",
			slog.Int("attempts", attempts), slog.Int("max_receive_count", src.MaxReceives))
	}
	return src, nil
}

// DeliveryDeadLetters are the bodies of the delivery messages the queue's redrive policy moved to
// its dead-letter queue.
func (l *AWSLocal) DeliveryDeadLetters() []string { return l.queue.DeadLetters() }

// DeliveryDeadLetterAlarms says, for each alarm of the template on the delivery dead-letter
// queue's ApproximateNumberOfMessagesVisible (by logical id), whether its condition is met now.
// aws-local has no CloudWatch: nothing notifies the alarm topic.
func (l *AWSLocal) DeliveryDeadLetterAlarms() map[string]bool { return l.queue.DeadLetterAlarms() }
