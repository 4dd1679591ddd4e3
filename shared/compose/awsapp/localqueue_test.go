package awsapp

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
)

// TestLocalQueueHandsMessagesAsSQS: a message reaches the handler as an SQS event of one record
// holding it; a delayed one is dropped by Close and never handled.
func TestLocalQueueHandsMessagesAsSQS(t *testing.T) {
	got := make(chan DeliveryMessage, 4)
	q := &LocalQueue{Handler: lambda.NewHandler(func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		for _, r := range ev.Records {
			var m DeliveryMessage
			if err := json.Unmarshal([]byte(r.Body), &m); err != nil || r.MessageId == "" {
				t.Errorf("record %+v: %v", r, err)
			}
			got <- m
		}
		return events.SQSEventResponse{}, nil
	})}
	ctx := context.Background()
	now := DeliveryMessage{Kind: KindSweep}
	if err := q.Send(ctx, now, 0); err != nil {
		t.Fatal(err)
	}
	if err := q.Send(ctx, DeliveryMessage{Kind: KindDeploy, OrganizationID: "o", BuildID: "b"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if m := <-got; m != now {
		t.Fatalf("handled %+v, want %+v", m, now)
	}
	q.Close()
	if len(got) != 0 {
		t.Fatalf("the delayed message was handled after Close: %+v", <-got)
	}
	if err := q.Send(ctx, now, 0); err == nil {
		t.Fatal("a closed queue took a message")
	}
}
