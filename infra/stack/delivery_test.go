package stack_test

import (
	"testing"

	"github.com/kilnbuild/kiln/infra/stack"
)

func TestQueues(t *testing.T) {
	queues := resources(t, "AWS::SQS::Queue")
	delivery := queues[queueID(t, "DeliveryQueue")]["Properties"].(obj)
	wantRedrive := obj{"deadLetterTargetArn": arnOf(queueID(t, "DeliveryDeadLetterQueue")), "maxReceiveCount": stack.DeliveryMaxReceiveCount}
	if !equalJSON(delivery["RedrivePolicy"], wantRedrive) {
		t.Errorf("RedrivePolicy %s, want %s", jsonString(delivery["RedrivePolicy"]), jsonString(wantRedrive))
	}
	// Longer than the deliver function may run (Lambda refuses the event source otherwise).
	if v, _ := delivery["VisibilityTimeout"].(float64); v < 900 {
		t.Errorf("VisibilityTimeout %v, want at least the deliver function's 900 s", delivery["VisibilityTimeout"])
	}
	for id, q := range queues {
		p := q["Properties"].(obj)
		if p["SqsManagedSseEnabled"] != true {
			t.Errorf("%s: not encrypted", id)
		}
	}
	// TLS only, on every queue.
	for _, name := range []string{"DeliveryQueue", "DeliveryDeadLetterQueue", "EventsDeadLetterQueue"} {
		q := queueID(t, name)
		found := false
		for _, p := range resources(t, "AWS::SQS::QueuePolicy") {
			p := p["Properties"].(obj)
			if !equalJSON(p["Queues"], []any{ref(q)}) {
				continue
			}
			for _, s := range asList(p["PolicyDocument"].(obj)["Statement"]) {
				s := s.(obj)
				found = found || (s["Effect"] == "Deny" && s["Action"] == "sqs:*" &&
					equalJSON(s["Condition"], obj{"Bool": obj{"aws:SecureTransport": "false"}}))
			}
		}
		if !found {
			t.Errorf("%s: no TLS-only policy", name)
		}
	}
}

// TestDeliverEventSource: one message per invocation, and the failures the handler reports are
// honoured (ReportBatchItemFailures; without it Lambda deletes a message the handler reported
// failed, issue 36, finding 2).
func TestDeliverEventSource(t *testing.T) {
	m := props(t, "AWS::Lambda::EventSourceMapping")
	want := obj{
		"BatchSize":             1,
		"EventSourceArn":        arnOf(queueID(t, "DeliveryQueue")),
		"FunctionName":          ref(functionLogicalID(t, "deliver")),
		"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
	}
	if !equalJSON(m, want) {
		t.Errorf("event source mapping %s, want %s", jsonString(m), jsonString(want))
	}
}
