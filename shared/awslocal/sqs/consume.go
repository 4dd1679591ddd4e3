package sqs

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// received is one message of a batch, as it was received.
type received struct {
	id, body, handle string
	receives         int
	sent             time.Time
}

// receive takes up to the batch size of visible messages, hiding each for the visibility
// timeout; a visible message already received maxReceiveCount times goes to the dead-letter queue
// instead. next is when the first hidden message shows again (zero: none waits).
func (q *Queue) receive(now time.Time) (batch []received, next time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	kept := q.msgs[:0]
	for _, m := range q.msgs {
		switch {
		case m.visibleAt.After(now):
			if next.IsZero() || m.visibleAt.Before(next) {
				next = m.visibleAt
			}
		case q.Source.MaxReceives > 0 && m.receives >= q.Source.MaxReceives:
			q.dead = append(q.dead, m.body)
			q.log().Error("sqs stand-in: message moved to the dead-letter queue (redrive policy)", slog.String("message_id", m.id),
				slog.Int("receives", m.receives), slog.String("dead_letter_queue", q.Source.DeadLetterQueue))
			continue
		case len(batch) < q.Source.batchSize():
			m.receives++
			m.handle = m.id + "/" + strconv.Itoa(m.receives)
			m.visibleAt = now.Add(q.Source.visibility())
			batch = append(batch, received{id: m.id, body: m.body, handle: m.handle, receives: m.receives, sent: m.sent})
		default:
			next = now
		}
		kept = append(kept, m)
	}
	clear(q.msgs[len(kept):])
	q.msgs = kept
	return batch, next
}

// invoke hands a batch to the consumer and deletes what it handled.
func (q *Queue) invoke(batch []received) {
	ev := events.SQSEvent{}
	for _, r := range batch {
		sum := md5.Sum([]byte(r.body))
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: r.id, ReceiptHandle: r.handle, Body: r.body, Md5OfBody: hex.EncodeToString(sum[:]),
			Attributes: map[string]string{
				"ApproximateReceiveCount":          strconv.Itoa(r.receives),
				"SentTimestamp":                    strconv.FormatInt(r.sent.UnixMilli(), 10),
				"ApproximateFirstReceiveTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10),
			},
			EventSource: "aws:sqs", EventSourceARN: q.ARN, AWSRegion: "us-east-1",
		})
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		q.log().Error("sqs stand-in: encode an event", slog.String("error", err.Error()))
		return
	}
	out, err := q.Consumer.Invoke(q.ctx, payload)
	if err == nil {
		var failed map[string]bool
		if failed, err = q.failures(out, batch); err == nil {
			for _, r := range batch {
				if failed[r.id] {
					q.log().Warn("sqs stand-in: the consumer reported a message failed", slog.String("message_id", r.id), slog.Int("receive", r.receives))
					continue
				}
				q.delete(r.handle)
			}
			return
		}
	}
	if q.ctx.Err() == nil {
		q.log().Warn("sqs stand-in: the batch failed; its messages come back after the visibility timeout",
			slog.Int("messages", len(batch)), slog.String("error", err.Error()))
	}
}

// failures reads the messages a successful invocation reports failed: none unless the mapping
// has ReportBatchItemFailures (Lambda then ignores the answer); an item that names no message of
// the batch fails the whole batch (an error).
func (q *Queue) failures(out []byte, batch []received) (map[string]bool, error) {
	if !q.Source.ReportBatchItemFailures {
		return nil, nil
	}
	var resp events.SQSEventResponse
	if len(out) > 0 && string(out) != "null" {
		if err := json.Unmarshal(out, &resp); err != nil {
			return nil, fmt.Errorf("the consumer's answer is not an SQS event response: %w", err)
		}
	}
	ids := map[string]bool{}
	for _, r := range batch {
		ids[r.id] = true
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		if !ids[f.ItemIdentifier] {
			return nil, errors.New("batchItemFailures names " + strconv.Quote(f.ItemIdentifier) + ", not a message of the batch")
		}
		failed[f.ItemIdentifier] = true
	}
	return failed, nil
}

// delete deletes the message of a receipt handle, unless it was received again since.
func (q *Queue) delete(handle string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, m := range q.msgs {
		if m.handle == handle {
			q.msgs = append(q.msgs[:i], q.msgs[i+1:]...)
			return
		}
	}
}

// DeadLetters is the bodies of the messages the redrive policy moved to the dead-letter queue.
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

// DeadLetterAlarms says, for each alarm of Source on the dead-letter queue, whether the queue's
// ApproximateNumberOfMessagesVisible meets its condition now (every dead letter is visible:
// nothing receives from the dead-letter queue here).
func (q *Queue) DeadLetterAlarms() map[string]bool {
	n := float64(len(q.DeadLetters()))
	out := map[string]bool{}
	for _, a := range q.Source.Alarms {
		out[a.ID] = a.Breached(n)
	}
	return out
}

// Handler is an SQS event handler as a Function, each invocation with its own JSON buffers:
// aws-lambda-go's lambda.NewHandler returns bytes of a pooled buffer that a concurrent invocation
// may reuse (a Lambda execution environment runs one invocation at a time; the stand-in runs its
// batches at once).
type Handler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// Invoke decodes the event, calls the handler and encodes its answer.
func (h Handler) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var ev events.SQSEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, fmt.Errorf("not an SQS event: %w", err)
	}
	resp, err := h(ctx, ev)
	if err != nil {
		return nil, err
	}
	return json.Marshal(resp)
}
