package awsapp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

type sqsRecorder struct{ in []*sqs.SendMessageInput }

func (r *sqsRecorder) SendMessage(ctx context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	r.in = append(r.in, in)
	return &sqs.SendMessageOutput{}, nil
}

// TestSQSQueueSend: the body is the message's JSON, the delay whole seconds rounded up and
// capped at SQS's 900.
func TestSQSQueueSend(t *testing.T) {
	rec := &sqsRecorder{}
	q := &SQSQueue{Client: rec, URL: "https://sqs.eu-west-1.amazonaws.com/1/kiln-deliveries"}
	m := DeliveryMessage{Kind: KindDeploy, OrganizationID: "o", BuildID: "b"}
	for _, tc := range []struct {
		delay time.Duration
		want  int32
	}{{0, 0}, {-time.Second, 0}, {1500 * time.Millisecond, 2}, {120 * time.Second, 120}, {time.Hour, 900}} {
		rec.in = nil
		if err := q.Send(context.Background(), m, tc.delay); err != nil {
			t.Fatal(err)
		}
		var got DeliveryMessage
		if err := json.Unmarshal([]byte(aws.ToString(rec.in[0].MessageBody)), &got); err != nil || got != m {
			t.Fatalf("body %s", aws.ToString(rec.in[0].MessageBody))
		}
		if rec.in[0].DelaySeconds != tc.want || aws.ToString(rec.in[0].QueueUrl) != q.URL {
			t.Errorf("delay %v: DelaySeconds %d to %s, want %d", tc.delay, rec.in[0].DelaySeconds, aws.ToString(rec.in[0].QueueUrl), tc.want)
		}
	}
}

type recordingQueue struct{ sent []DeliveryMessage }

func (q *recordingQueue) Send(ctx context.Context, m DeliveryMessage, delay time.Duration) error {
	q.sent = append(q.sent, m)
	return nil
}

// TestRetryLaterThanTheQueueDelayIsLeftToTheTick: SQS cannot hold a message longer than 900 s.
func TestRetryLaterThanTheQueueDelayIsLeftToTheTick(t *testing.T) {
	q := &recordingQueue{}
	now := time.Now()
	d := &Deliver{queue: q, logger: slog.New(slog.NewTextHandler(io.Discard, nil)), now: func() time.Time { return now }}
	m := DeliveryMessage{Kind: KindDeploy, OrganizationID: "o", BuildID: "b"}
	d.retry(context.Background(), m, now.Add(MaxQueueDelay+time.Second))
	d.retry(context.Background(), m, now.Add(MaxQueueDelay))
	if len(q.sent) != 1 {
		t.Fatalf("queued %d retries, want only the one due within %v", len(q.sent), MaxQueueDelay)
	}
}
