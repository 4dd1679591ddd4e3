package sqs

import (
	"context"
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
)

// consumer records the bodies it gets: "poison" is reported failed (batchItemFailures), "flaky"
// fails the invocation its first fails times, "hide" is hidden for a second (through the SDK's
// ChangeMessageVisibility) and reported failed the first time.
type consumer struct {
	mu      sync.Mutex
	fails   int
	batches []int
	at      map[string][]time.Time
	client  *awssqs.Client
	url     string
	seen    chan string
}

func (c *consumer) handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batches = append(c.batches, len(ev.Records))
	var resp events.SQSEventResponse
	var err error
	for _, r := range ev.Records {
		c.at[r.Body] = append(c.at[r.Body], time.Now())
		c.seen <- r.Body
		switch {
		case r.Body == "poison":
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
		case r.Body == "flaky" && c.fails > 0:
			c.fails--
			err = errors.New("not yet")
		case r.Body == "hide" && len(c.at["hide"]) == 1:
			if _, herr := c.client.ChangeMessageVisibility(ctx, &awssqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(c.url),
				ReceiptHandle: aws.String(r.ReceiptHandle), VisibilityTimeout: 1}); herr != nil {
				return resp, herr
			}
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
		}
	}
	return resp, err
}

// start serves a queue of src to a new consumer through the real SQS client.
func start(t *testing.T, src EventSource) (*Queue, *consumer) {
	t.Helper()
	c := &consumer{fails: 1, seen: make(chan string, 64), at: map[string][]time.Time{}}
	q := &Queue{ARN: "arn:aws:sqs:us-east-1:000000000000:deliveries", Consumer: Handler(c.handle), Source: src}
	srv := httptest.NewServer(q)
	t.Cleanup(srv.Close)
	q.URL = srv.URL + "/000000000000/deliveries"
	t.Cleanup(q.Close)
	c.client = awssqs.New(awssqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")})
	c.url = q.URL
	return q, c
}

func send(t *testing.T, c *consumer, delay int32, bodies ...string) {
	t.Helper()
	for _, body := range bodies {
		if _, err := c.client.SendMessage(context.Background(), &awssqs.SendMessageInput{QueueUrl: aws.String(c.url), MessageBody: aws.String(body), DelaySeconds: delay}); err != nil {
			t.Fatalf("send %s: %v", body, err)
		}
	}
}

// wait collects n receives.
func wait(t *testing.T, c *consumer, n int) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for range n {
		select {
		case b := <-c.seen:
			counts[b]++
		case <-time.After(10 * time.Second):
			t.Fatalf("receives so far %v", counts)
		}
	}
	return counts
}

// quiet fails if another receive comes within d.
func quiet(t *testing.T, c *consumer, d time.Duration) {
	t.Helper()
	select {
	case b := <-c.seen:
		t.Fatalf("%s received once more", b)
	case <-time.After(d):
	}
}

// TestEventSourceFollowsTheMapping: the real SQS client sends; a message is received once when
// its batch succeeds, again after its invocation fails; a message reported failed comes back
// only with ReportBatchItemFailures (without, the returned success deletes it, as in AWS), and
// after maxReceiveCount receives it is in the dead-letter queue, its alarm's condition met.
func TestEventSourceFollowsTheMapping(t *testing.T) {
	alarm := Alarm{ID: "DeliveryDeadLetterAlarm", Comparison: "GreaterThanThreshold"}
	for _, tc := range []struct {
		name       string
		report     bool
		wantPoison int
		wantDead   []string
	}{
		{"ReportBatchItemFailures", true, 3, []string{"poison"}},
		{"without ReportBatchItemFailures", false, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, c := start(t, EventSource{BatchSize: 1, ReportBatchItemFailures: tc.report, Visibility: 10 * time.Millisecond, MaxReceives: 3,
				DeadLetterQueue: "DLQ", Alarms: []Alarm{alarm}})
			send(t, c, 0, "once", "flaky", "poison")
			counts := wait(t, c, 1+2+tc.wantPoison)
			quiet(t, c, 300*time.Millisecond)
			if counts["once"] != 1 || counts["flaky"] != 2 || counts["poison"] != tc.wantPoison {
				t.Fatalf("receives %v, want once 1, flaky 2, poison %d", counts, tc.wantPoison)
			}
			if dead := q.DeadLetters(); !slices.Equal(dead, tc.wantDead) {
				t.Fatalf("dead letters %v, want %v", dead, tc.wantDead)
			}
			if got := q.DeadLetterAlarms()[alarm.ID]; got != (len(tc.wantDead) > 0) {
				t.Fatalf("alarm condition met %v with %d dead letters", got, len(tc.wantDead))
			}
		})
	}
}

// TestChangeMessageVisibility: a consumer that hides its message for a second gets it again a
// second later, not after the queue's visibility timeout.
func TestChangeMessageVisibility(t *testing.T) {
	_, c := start(t, EventSource{BatchSize: 1, ReportBatchItemFailures: true, Visibility: time.Hour, MaxReceives: 5})
	send(t, c, 0, "hide")
	wait(t, c, 2)
	c.mu.Lock()
	gap := c.at["hide"][1].Sub(c.at["hide"][0])
	c.mu.Unlock()
	if gap < 900*time.Millisecond || gap > 5*time.Second {
		t.Fatalf("received again after %v, want about 1 s", gap)
	}
	_, err := c.client.ChangeMessageVisibility(context.Background(), &awssqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(c.url),
		ReceiptHandle: aws.String("nonsense"), VisibilityTimeout: 1})
	if err == nil || !strings.Contains(err.Error(), "ReceiptHandleIsInvalid") {
		t.Fatalf("an unknown receipt handle: %v", err)
	}
}

// TestBatchSize: messages visible together are handed in batches of the mapping's size; a bad
// delay is refused as SQS refuses it.
func TestBatchSize(t *testing.T) {
	_, c := start(t, EventSource{BatchSize: 2, ReportBatchItemFailures: true})
	send(t, c, 1, "a", "b", "c")
	wait(t, c, 3)
	c.mu.Lock()
	batches := slices.Clone(c.batches)
	c.mu.Unlock()
	// Three messages visible together come as 2 and 1; on a loaded machine the sends may fall
	// in different polls, but no batch is ever over the mapping's size.
	total := 0
	for _, n := range batches {
		if n > 2 {
			t.Fatalf("batches of %v: one is over the batch size 2", batches)
		}
		total += n
	}
	if total != 3 {
		t.Fatalf("batches of %v, want 3 messages", batches)
	}
	_, err := c.client.SendMessage(context.Background(), &awssqs.SendMessageInput{QueueUrl: aws.String(c.url), MessageBody: aws.String("x"), DelaySeconds: 901})
	if err == nil {
		t.Fatal("a delay over 900 s was accepted")
	}
}
