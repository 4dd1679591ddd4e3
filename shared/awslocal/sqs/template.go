package sqs

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// EventSource is what the stand-in does as the template says: the function's event source mapping
// (AWS::Lambda::EventSourceMapping) and its queue's attributes (AWS::SQS::Queue). Zero fields are
// AWS's defaults.
type EventSource struct {
	// BatchSize is the most records an invocation gets (the mapping's BatchSize; SQS's default 10).
	BatchSize int
	// ReportBatchItemFailures: the mapping's FunctionResponseTypes has it, so the
	// batchItemFailures a function returns are honoured; without it they are ignored.
	ReportBatchItemFailures bool
	// Visibility is the queue's VisibilityTimeout (default 30 s): how long a received message is
	// hidden unless the consumer changes it.
	Visibility time.Duration
	// MaxReceives is the redrive policy's maxReceiveCount; 0: no dead-letter queue, a message
	// comes back until it is deleted or expires.
	MaxReceives int
	// Queue and DeadLetterQueue are the logical ids of the queue and of its redrive policy's
	// dead-letter queue ("" without one).
	Queue, DeadLetterQueue string
	// Alarms are the template's alarms on the dead-letter queue's
	// ApproximateNumberOfMessagesVisible.
	Alarms []Alarm
}

func (s EventSource) batchSize() int {
	if s.BatchSize > 0 {
		return s.BatchSize
	}
	return 10
}

func (s EventSource) visibility() time.Duration {
	if s.Visibility > 0 {
		return s.Visibility
	}
	return 30 * time.Second
}

// Alarm is a CloudWatch alarm of the template on a queue's ApproximateNumberOfMessagesVisible.
type Alarm struct {
	// ID is its logical id; Comparison its ComparisonOperator.
	ID, Comparison string
	Threshold      float64
}

// Breached says whether a value of the metric meets the alarm's condition (one period; the
// stand-in has no CloudWatch, this is the condition alone).
func (a Alarm) Breached(v float64) bool {
	switch a.Comparison {
	case "GreaterThanThreshold":
		return v > a.Threshold
	case "GreaterThanOrEqualToThreshold":
		return v >= a.Threshold
	case "LessThanThreshold":
		return v < a.Threshold
	case "LessThanOrEqualToThreshold":
		return v <= a.Threshold
	}
	return false
}

type resource struct {
	Type       string         `json:"Type"`
	Properties map[string]any `json:"Properties"`
}

// EventSourceOf reads the event source mapping of the function whose construct id is function
// ("DeliverFunction": CDK names its resource DeliverFunction<8 hex digits>) from a synthesized
// template, with its queue's visibility timeout and redrive policy and the alarms on the
// dead-letter queue.
func EventSourceOf(template []byte, function string) (EventSource, error) {
	var doc struct {
		Resources map[string]resource `json:"Resources"`
	}
	if err := json.Unmarshal(template, &doc); err != nil {
		return EventSource{}, fmt.Errorf("sqs: not a CloudFormation template: %w", err)
	}
	idRe := regexp.MustCompile(`^` + regexp.QuoteMeta(function) + `[0-9A-F]{8}$`)
	var src EventSource
	found := false
	for _, r := range doc.Resources {
		if r.Type != "AWS::Lambda::EventSourceMapping" || !idRe.MatchString(refOf(r.Properties["FunctionName"])) {
			continue
		}
		if found {
			return EventSource{}, fmt.Errorf("sqs: %s has more than one event source mapping", function)
		}
		found = true
		src.Queue = getAttOf(r.Properties["EventSourceArn"], "Arn")
		if n, ok := number(r.Properties["BatchSize"]); ok {
			src.BatchSize = n
		}
		types, _ := r.Properties["FunctionResponseTypes"].([]any)
		src.ReportBatchItemFailures = slices.Contains(types, any("ReportBatchItemFailures"))
	}
	if !found {
		return EventSource{}, fmt.Errorf("sqs: no event source mapping of %s in the template", function)
	}
	q, ok := doc.Resources[src.Queue]
	if !ok || q.Type != "AWS::SQS::Queue" {
		return EventSource{}, fmt.Errorf("sqs: the event source of %s is not a queue of the template", function)
	}
	if n, ok := number(q.Properties["VisibilityTimeout"]); ok {
		src.Visibility = time.Duration(n) * time.Second
	}
	if p := q.Properties["RedrivePolicy"]; p != nil {
		if s, ok := p.(string); ok { // CloudFormation takes the policy as JSON text too
			if err := json.Unmarshal([]byte(s), &p); err != nil {
				return EventSource{}, fmt.Errorf("sqs: %s's RedrivePolicy: %w", src.Queue, err)
			}
		}
		m, _ := p.(map[string]any)
		src.DeadLetterQueue = getAttOf(m["deadLetterTargetArn"], "Arn")
		n, ok := number(m["maxReceiveCount"])
		if src.DeadLetterQueue == "" || !ok || n < 1 {
			return EventSource{}, errors.New("sqs: " + src.Queue + "'s RedrivePolicy needs a deadLetterTargetArn of the template and a maxReceiveCount")
		}
		src.MaxReceives = n
	}
	for id, r := range doc.Resources {
		if r.Type != "AWS::CloudWatch::Alarm" || src.DeadLetterQueue == "" || r.Properties["Namespace"] != "AWS/SQS" ||
			r.Properties["MetricName"] != "ApproximateNumberOfMessagesVisible" {
			continue
		}
		dims, _ := r.Properties["Dimensions"].([]any)
		for _, d := range dims {
			d, _ := d.(map[string]any)
			if d["Name"] == "QueueName" && getAttOf(d["Value"], "QueueName") == src.DeadLetterQueue {
				t, _ := r.Properties["Threshold"].(float64)
				cmp, _ := r.Properties["ComparisonOperator"].(string)
				src.Alarms = append(src.Alarms, Alarm{ID: id, Comparison: cmp, Threshold: t})
			}
		}
	}
	slices.SortFunc(src.Alarms, func(a, b Alarm) int { return cmp.Compare(a.ID, b.ID) })
	return src, nil
}

// refOf is the logical id of {"Ref": id}, or a plain string.
func refOf(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	m, _ := v.(map[string]any)
	s, _ := m["Ref"].(string)
	return s
}

// getAttOf is the logical id of {"Fn::GetAtt": [id, attr]}.
func getAttOf(v any, attr string) string {
	m, _ := v.(map[string]any)
	l, _ := m["Fn::GetAtt"].([]any)
	if len(l) != 2 || l[1] != attr {
		return ""
	}
	s, _ := l[0].(string)
	return s
}

// number reads a template number, written as a number or a string.
func number(v any) (int, bool) {
	switch v := v.(type) {
	case float64:
		return int(v), true
	case string:
		n, err := strconv.Atoi(v)
		return n, err == nil
	}
	return 0, false
}
