package awsapp

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// LocalQueue is the delivery queue of kiln aws-local: each message is handed, after its delay, to
// Handler as SQS hands it to the deliver Lambda (an SQS event of one record, as JSON, through
// lambda.NewHandler), in its own goroutine. Set Handler before the first Send. A message the
// handler reports failed is not handed again (the tick queues its job again while it is due).
// Close drops the delayed messages (likewise) and waits for those under way.
type LocalQueue struct {
	Handler lambda.Handler
	Logger  *slog.Logger

	mu     sync.Mutex
	closed bool
	timers map[*time.Timer]bool
	wg     sync.WaitGroup
}

// Send hands m to the handler after delay (capped at MaxQueueDelay).
func (q *LocalQueue) Send(ctx context.Context, m DeliveryMessage, delay time.Duration) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(events.SQSEvent{Records: []events.SQSMessage{{
		MessageId: kiln.NewID(), Body: string(body), EventSource: "aws:sqs", AWSRegion: "local",
	}}})
	if err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return kiln.Errorf(kiln.EInternal, "the delivery queue is closed")
	}
	if q.timers == nil {
		q.timers = map[*time.Timer]bool{}
	}
	q.wg.Add(1)
	var t *time.Timer
	t = time.AfterFunc(min(max(delay, 0), MaxQueueDelay), func() {
		defer q.wg.Done()
		q.mu.Lock()
		delete(q.timers, t)
		q.mu.Unlock()
		if _, err := q.Handler.Invoke(context.Background(), raw); err != nil && q.Logger != nil {
			q.Logger.Error("deliver handler", slog.String("error", err.Error()))
		}
	})
	q.timers[t] = true
	return nil
}

// Close stops taking messages, drops the delayed ones and waits for those being handled.
func (q *LocalQueue) Close() {
	q.mu.Lock()
	q.closed = true
	for t := range q.timers {
		if t.Stop() {
			q.wg.Done()
		}
	}
	q.timers = nil
	q.mu.Unlock()
	q.wg.Wait()
}
