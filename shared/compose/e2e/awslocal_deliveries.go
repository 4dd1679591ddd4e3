package e2e

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/serve"
)

// ticks are the schedule rule's intervals tests gave their aws-local (WithTick), by data directory.
var ticks sync.Map

// WithTick makes the world's aws-local invoke the schedule function every d instead of every
// second: a test that must not lean on the tick (a delivery's retry) makes it long.
func WithTick(d time.Duration) func(*serve.Config) {
	return func(c *serve.Config) { ticks.Store(c.Data, d) }
}

// tickOf is the schedule rule's interval of the aws-local of a data directory.
func tickOf(dataDir string) time.Duration {
	if d, ok := ticks.Load(dataDir); ok {
		return d.(time.Duration)
	}
	return time.Second
}

// WithoutBatchItemFailures removes FunctionResponseTypes from every event source mapping: the
// deliver function's partial batch responses are ignored, as before issue 36.
func WithoutBatchItemFailures() TemplateEdit {
	return func(t testing.TB, resources map[string]any) {
		found := false
		for _, r := range resources {
			r := r.(map[string]any)
			if r["Type"] == "AWS::Lambda::EventSourceMapping" {
				delete(r["Properties"].(map[string]any), "FunctionResponseTypes")
				found = true
			}
		}
		if !found {
			t.Fatal("the template has no event source mapping")
		}
	}
}

// WithoutRedrive removes the redrive policy (the dead-letter queue) of every queue.
func WithoutRedrive() TemplateEdit {
	return func(t testing.TB, resources map[string]any) {
		for _, r := range resources {
			r := r.(map[string]any)
			if r["Type"] == "AWS::SQS::Queue" {
				delete(r["Properties"].(map[string]any), "RedrivePolicy")
			}
		}
	}
}

// WaitDeadLetter waits for a message of the delivery dead-letter queue that contains want (a
// build's or a webhook delivery's id), and returns it.
func (w *World) WaitDeadLetter(t testing.TB, want string, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		for _, m := range w.AWS.DeliveryDeadLetters() {
			if strings.Contains(m, want) {
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no message of %s in the delivery dead-letter queue after %v (it holds %v)", want, within, w.AWS.DeliveryDeadLetters())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// DeadLetterAlarmsMet are the logical ids of the template's alarms on the delivery dead-letter
// queue whose condition its messages meet now.
func (w *World) DeadLetterAlarmsMet() []string {
	var met []string
	for id, ok := range w.AWS.DeliveryDeadLetterAlarms() {
		if ok {
			met = append(met, id)
		}
	}
	return met
}
