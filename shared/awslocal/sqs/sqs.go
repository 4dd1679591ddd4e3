// Package sqs stands in for an SQS queue and its Lambda event source mapping, for kiln
// aws-local: it answers SendMessage and ChangeMessageVisibility in SQS's JSON protocol (so kiln's
// code uses the real AWS SDK client), keeps each message until its delay passed, and invokes the
// consumer function with batches of visible messages, as the template's event source mapping
// and queue say (EventSourceOf):
//
//   - up to BatchSize records an invocation;
//   - a received message is hidden for the queue's visibility timeout, or as long as the consumer
//     asks with ChangeMessageVisibility;
//   - an invocation that fails (an error) leaves its whole batch to come back after that;
//   - one that returns deletes its whole batch, except, only with ReportBatchItemFailures, the
//     messages it lists in batchItemFailures (a list naming a message not in the batch fails the
//     whole batch);
//   - a message received maxReceiveCount times is moved to the dead-letter queue instead of
//     being received again (the redrive policy).
//
// Messages live in memory: a restart loses the ones waiting. kiln's senders tolerate that (the
// one-minute tick enqueues whatever is due again), as they tolerate SQS's at-least-once delivery.
package sqs

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Function is an invocable Lambda function (Handler(fn) is one, safe for concurrent batches).
type Function interface {
	Invoke(ctx context.Context, payload []byte) ([]byte, error)
}

// Queue is one queue with its consumer.
type Queue struct {
	// ARN and URL name the queue (the URL is what senders put in QueueUrl).
	ARN, URL string
	Consumer Function
	// Source is the event source mapping and the queue's attributes, from the template
	// (EventSourceOf); its zero fields are AWS's defaults.
	Source EventSource
	Logger *slog.Logger

	mu     sync.Mutex
	msgs   []*message // waiting, or received and hidden
	dead   []string   // the dead-letter queue's bodies
	wake   chan struct{}
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
	once   sync.Once
}

// message is one message of the queue.
type message struct {
	id, body  string
	sent      time.Time
	visibleAt time.Time
	receives  int
	handle    string // the receipt handle of its last receive
}

func (q *Queue) init() {
	q.once.Do(func() {
		q.ctx, q.cancel = context.WithCancel(context.Background())
		q.wake = make(chan struct{}, 1)
		q.wg.Add(1)
		go q.poll()
	})
}

// ServeHTTP answers AmazonSQS.SendMessage and AmazonSQS.ChangeMessageVisibility (JSON 1.0
// protocol).
func (q *Queue) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q.init()
	var in struct {
		QueueUrl          string
		MessageBody       string
		DelaySeconds      int
		ReceiptHandle     string
		VisibilityTimeout int
	}
	target := r.Header.Get("X-Amz-Target")
	if target != "AmazonSQS.SendMessage" && target != "AmazonSQS.ChangeMessageVisibility" {
		writeError(w, http.StatusBadRequest, "com.amazonaws.sqs#UnsupportedOperation", "kiln's SQS stand-in answers SendMessage and ChangeMessageVisibility only, not "+target)
		return
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 256<<10+1024)).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "com.amazonaws.sqs#InvalidParameterValue", "the request is not JSON: "+err.Error())
		return
	}
	if in.QueueUrl != q.URL {
		writeError(w, http.StatusBadRequest, "com.amazonaws.sqs#QueueDoesNotExist", "The specified queue does not exist.")
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	if target == "AmazonSQS.ChangeMessageVisibility" {
		q.changeVisibility(w, in.ReceiptHandle, in.VisibilityTimeout)
		return
	}
	switch {
	case in.MessageBody == "" || len(in.MessageBody) > 256<<10:
		writeError(w, http.StatusBadRequest, "com.amazonaws.sqs#InvalidParameterValue", "a message body is 1 byte to 256 KiB")
		return
	case in.DelaySeconds < 0 || in.DelaySeconds > 900:
		writeError(w, http.StatusBadRequest, "com.amazonaws.sqs#InvalidParameterValue", "DelaySeconds must be 0 to 900")
		return
	}
	id := kiln.NewID()
	sum := md5.Sum([]byte(in.MessageBody))
	now := time.Now()
	q.mu.Lock()
	q.msgs = append(q.msgs, &message{id: id, body: in.MessageBody, sent: now, visibleAt: now.Add(time.Duration(in.DelaySeconds) * time.Second)})
	q.mu.Unlock()
	q.poke()
	_ = json.NewEncoder(w).Encode(map[string]string{"MessageId": id, "MD5OfMessageBody": hex.EncodeToString(sum[:])})
}

// changeVisibility hides the received message of the receipt handle for secs from now (0: it is
// visible at once).
func (q *Queue) changeVisibility(w http.ResponseWriter, handle string, secs int) {
	if secs < 0 || secs > 43200 {
		writeError(w, http.StatusBadRequest, "com.amazonaws.sqs#InvalidParameterValue", "VisibilityTimeout must be 0 to 43200")
		return
	}
	now := time.Now()
	q.mu.Lock()
	var found *message
	for _, m := range q.msgs {
		if handle != "" && m.handle == handle {
			found = m
		}
	}
	inFlight := found != nil && found.visibleAt.After(now)
	if inFlight {
		found.visibleAt = now.Add(time.Duration(secs) * time.Second)
	}
	q.mu.Unlock()
	switch {
	case found == nil:
		writeError(w, http.StatusBadRequest, "com.amazonaws.sqs#ReceiptHandleIsInvalid", "The receipt handle is not valid (the message was deleted or received again).")
	case !inFlight:
		writeError(w, http.StatusBadRequest, "com.amazonaws.sqs#MessageNotInflight", "The message is not in flight.")
	default:
		q.poke()
		_, _ = w.Write([]byte("{}"))
	}
}

// poke wakes the poller.
func (q *Queue) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// poll is the event source mapping: it receives batches of visible messages and invokes the
// consumer with each, until Close.
func (q *Queue) poll() {
	defer q.wg.Done()
	for {
		batch, next := q.receive(time.Now())
		if len(batch) > 0 {
			q.wg.Add(1)
			go func() {
				defer q.wg.Done()
				q.invoke(batch)
			}()
			continue
		}
		var timer *time.Timer
		var fire <-chan time.Time
		if !next.IsZero() {
			timer = time.NewTimer(time.Until(next))
			fire = timer.C
		}
		select {
		case <-q.ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case <-q.wake:
		case <-fire:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}
