package sqs

import (
	"context"
	"errors"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
)

// consumer records the bodies it gets and fails the first fails deliveries of "flaky".
type consumer struct {
	mu    sync.Mutex
	got   []string
	fails int
	seen  chan string
}

func (c *consumer) handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	body := ev.Records[0].Body
	c.got = append(c.got, body)
	c.seen <- body
	if body == "poison" {
		return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: ev.Records[0].MessageId}}}, nil
	}
	if body == "flaky" && c.fails > 0 {
		c.fails--
		return events.SQSEventResponse{}, errors.New("not yet")
	}
	return events.SQSEventResponse{}, nil
}

// TestMessagesReachTheConsumerThroughTheSDK: the real SQS client sends; the consumer gets each
// message once when it succeeds, again after a failure, and a message failing every time ends
// in the dead-letter list; a bad delay is refused as SQS refuses it.
func TestMessagesReachTheConsumerThroughTheSDK(t *testing.T) {
	c := &consumer{fails: 1, seen: make(chan string, 16)}
	q := &Queue{ARN: "arn:aws:sqs:us-east-1:000000000000:deliveries", Consumer: lambda.NewHandler(c.handle),
		Visibility: 10 * time.Millisecond, MaxReceives: 3}
	srv := httptest.NewServer(q)
	defer srv.Close()
	q.URL = srv.URL + "/000000000000/deliveries"
	defer q.Close()
	client := awssqs.New(awssqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")})
	ctx := context.Background()
	for _, body := range []string{"once", "flaky", "poison"} {
		if _, err := client.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(body)}); err != nil {
			t.Fatalf("send %s: %v", body, err)
		}
	}
	counts := map[string]int{}
	for range 1 + 2 + 3 {
		select {
		case b := <-c.seen:
			counts[b]++
		case <-time.After(10 * time.Second):
			t.Fatalf("deliveries so far %v", counts)
		}
	}
	if counts["once"] != 1 || counts["flaky"] != 2 || counts["poison"] != 3 {
		t.Fatalf("deliveries %v, want once 1, flaky 2, poison 3", counts)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(q.DeadLetters()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if dead := q.DeadLetters(); len(dead) != 1 || dead[0] != "poison" {
		t.Fatalf("dead letters %v, want [poison]", dead)
	}
	_, err := client.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String("x"), DelaySeconds: 901})
	if err == nil {
		t.Fatal("a delay over 900 s was accepted")
	}
}
