// Package sqs stands in for an SQS queue and its Lambda event source mapping, for kiln
// aws-local: it answers SendMessage in SQS's JSON protocol (so kiln's code uses the real AWS SDK
// client), keeps each message until its delay passed, and invokes the consumer function with an
// SQS event of one record (batch size 1). A message whose invocation fails (an error, or a
// batch item failure) comes back after the visibility timeout, up to MaxReceives times; then it
// goes to the dead-letter list, as a redrive policy would move it to a DLQ.
//
// Messages live in memory: a restart loses the ones waiting. kiln's senders tolerate that (the
// one-minute tick enqueues whatever is due again), as they tolerate SQS's at-least-once delivery.
package sqs

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Function is an invocable Lambda function (lambda.NewHandler(fn) is one).
type Function interface {
	Invoke(ctx context.Context, payload []byte) ([]byte, error)
}

// Queue is one queue with its consumer.
type Queue struct {
	// ARN and URL name the queue (the URL is what senders put in QueueUrl).
	ARN, URL string
	Consumer Function
	// Visibility is how long a failed message waits before it is delivered again (default 30 s);
	// MaxReceives how often it is tried before it is dead-lettered (default 5).
	Visibility  time.Duration
	MaxReceives int
	Logger      *slog.Logger

	mu     sync.Mutex
	dead   []string
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
	once   sync.Once
}

func (q *Queue) init() {
	q.once.Do(func() { q.ctx, q.cancel = context.WithCancel(context.Background()) })
}

// ServeHTTP answers AmazonSQS.SendMessage (JSON 1.0 protocol).
func (q *Queue) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q.init()
	if target := r.Header.Get("X-Amz-Target"); target != "AmazonSQS.SendMessage" {
		writeError(w, http.StatusBadRequest, "com.amazonaws.sqs#UnsupportedOperation", "kiln's SQS stand-in answers SendMessage only, not "+target)
		return
	}
	var in struct {
		QueueUrl     string
		MessageBody  string
		DelaySeconds int
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 256<<10+1024)).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "com.amazonaws.sqs#InvalidParameterValue", "the request is not JSON: "+err.Error())
		return
	}
	switch {
	case in.QueueUrl != q.URL:
		writeError(w, http.StatusBadRequest, "com.amazonaws.sqs#QueueDoesNotExist", "The specified queue does not exist.")
		return
	case in.MessageBody == "" || len(in.MessageBody) > 256<<10:
		writeError(w, http.StatusBadRequest, "com.amazonaws.sqs#InvalidParameterValue", "a message body is 1 byte to 256 KiB")
		return
	case in.DelaySeconds < 0 || in.DelaySeconds > 900:
		writeError(w, http.StatusBadRequest, "com.amazonaws.sqs#InvalidParameterValue", "DelaySeconds must be 0 to 900")
		return
	}
	id := kiln.NewID()
	sum := md5.Sum([]byte(in.MessageBody))
	q.deliverLater(id, in.MessageBody, time.Duration(in.DelaySeconds)*time.Second)
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	_ = json.NewEncoder(w).Encode(map[string]string{"MessageId": id, "MD5OfMessageBody": hex.EncodeToString(sum[:])})
}

// deliverLater invokes the consumer with the message once delay passed, again after failures.
func (q *Queue) deliverLater(id, body string, delay time.Duration) {
	q.wg.Add(1)
	go func() {
		defer q.wg.Done()
		for receive := 1; ; receive++ {
			select {
			case <-q.ctx.Done():
				return
			case <-time.After(delay):
			}
			err := q.invoke(id, body, receive)
			if err == nil {
				return
			}
			q.log().Warn("sqs stand-in: the consumer failed a message", slog.String("message_id", id), slog.Int("receive", receive), slog.String("error", err.Error()))
			if receive >= q.maxReceives() {
				q.mu.Lock()
				q.dead = append(q.dead, body)
				q.mu.Unlock()
				q.log().Error("sqs stand-in: message moved to the dead-letter list", slog.String("message_id", id))
				return
			}
			delay = q.visibility()
		}
	}()
}

func (q *Queue) invoke(id, body string, receive int) error {
	sum := md5.Sum([]byte(body))
	ev := events.SQSEvent{Records: []events.SQSMessage{{
		MessageId: id, ReceiptHandle: id + "/" + strconv.Itoa(receive), Body: body, Md5OfBody: hex.EncodeToString(sum[:]),
		Attributes: map[string]string{
			"ApproximateReceiveCount": strconv.Itoa(receive),
			"SentTimestamp":           strconv.FormatInt(time.Now().UnixMilli(), 10),
		},
		EventSource: "aws:sqs", EventSourceARN: q.ARN, AWSRegion: "us-east-1",
	}}}
	payload, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	out, err := q.Consumer.Invoke(q.ctx, payload)
	if err != nil {
		return err
	}
	var resp events.SQSEventResponse
	if len(out) > 0 && string(out) != "null" {
		if err := json.Unmarshal(out, &resp); err != nil {
			return fmt.Errorf("the consumer's answer is not an SQS event response: %w", err)
		}
	}
	if len(resp.BatchItemFailures) > 0 {
		return fmt.Errorf("the consumer reported the message as failed")
	}
	return nil
}

// DeadLetters is the bodies of the messages that failed MaxReceives times.
func (q *Queue) DeadLetters() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.dead...)
}

// Close drops the waiting messages and waits for invocations under way.
func (q *Queue) Close() {
	q.init()
	q.cancel()
	q.wg.Wait()
}

func (q *Queue) visibility() time.Duration {
	if q.Visibility > 0 {
		return q.Visibility
	}
	return 30 * time.Second
}

func (q *Queue) maxReceives() int {
	if q.MaxReceives > 0 {
		return q.MaxReceives
	}
	return 5
}

func (q *Queue) log() *slog.Logger {
	if q.Logger != nil {
		return q.Logger
	}
	return slog.Default()
}

func writeError(w http.ResponseWriter, status int, typ, message string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-Query-Error", typ[len("com.amazonaws.sqs#"):]+";Sender")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": typ, "message": message})
}
