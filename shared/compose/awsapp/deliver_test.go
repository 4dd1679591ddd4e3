package awsapp

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// TestOutcome: what the deliver handler does with a message after its attempt.
func TestOutcome(t *testing.T) {
	next := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name                               string
		attempted, live, failed, wasFailed bool
		receives                           int
		want                               verdict
	}{
		{"a failed attempt with a retry keeps its message until then", true, true, false, false, 1, verdict{retry: true, at: next}},
		{"a succeeded attempt deletes it", true, false, false, false, 2, verdict{}},
		{"the last failed attempt sends it to the dead-letter queue", true, false, true, false, 5, verdict{failed: true}},
		{"a delivery failed without an attempt (nothing to deliver) too", false, false, true, false, 1, verdict{failed: true}},
		{"the failed delivery's message, handed again, goes on", false, false, true, true, 3, verdict{failed: true}},
		{"a copy of a failed delivery's message is deleted", false, false, true, true, 1, verdict{}},
		{"a copy whose attempt another message claimed is deleted", false, true, false, false, 1, verdict{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := outcome(tc.attempted, tc.live, tc.failed, tc.wasFailed, next, tc.receives); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

type visibilityRecorder struct {
	sqsRecorder
	in []*sqs.ChangeMessageVisibilityInput
}

func (r *visibilityRecorder) ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	r.in = append(r.in, in)
	return &sqs.ChangeMessageVisibilityOutput{}, nil
}

// TestSQSQueueHide: whole seconds rounded up, capped at SQS's 12 hours; a client that cannot
// change a message's visibility is an error.
func TestSQSQueueHide(t *testing.T) {
	rec := &visibilityRecorder{}
	q := &SQSQueue{Client: rec, URL: "https://sqs.eu-west-1.amazonaws.com/1/kiln-deliveries"}
	for _, tc := range []struct {
		wait time.Duration
		want int32
	}{{0, 0}, {-time.Second, 0}, {20 * time.Millisecond, 1}, {90 * time.Second, 90}, {24 * time.Hour, 43200}} {
		rec.in = nil
		if err := q.Hide(context.Background(), "handle", tc.wait); err != nil {
			t.Fatal(err)
		}
		if got := rec.in[0]; got.VisibilityTimeout != tc.want || aws.ToString(got.ReceiptHandle) != "handle" || aws.ToString(got.QueueUrl) != q.URL {
			t.Errorf("wait %v: %d s for %s on %s, want %d s", tc.wait, got.VisibilityTimeout, aws.ToString(got.ReceiptHandle), aws.ToString(got.QueueUrl), tc.want)
		}
	}
	if err := (&SQSQueue{Client: &sqsRecorder{}}).Hide(context.Background(), "handle", time.Second); err == nil {
		t.Fatal("a client without ChangeMessageVisibility hid a message")
	}
}
