package sqs

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// templateOf is a template of the deliver function, its mapping's extra properties, and its
// queue's.
func templateOf(mapping, queue string) []byte {
	return []byte(`{"Resources": {
  "DeliverFunction0A1B2C3D": {"Type": "AWS::Lambda::Function", "Properties": {}},
  "APIFunction0A1B2C3D": {"Type": "AWS::Lambda::Function", "Properties": {}},
  "Other": {"Type": "AWS::Lambda::EventSourceMapping", "Properties": {"FunctionName": {"Ref": "APIFunction0A1B2C3D"}, "EventSourceArn": {"Fn::GetAtt": ["DLQ1", "Arn"]}, "BatchSize": 7}},
  "Mapping": {"Type": "AWS::Lambda::EventSourceMapping", "Properties": {"FunctionName": {"Ref": "DeliverFunction0A1B2C3D"}, "EventSourceArn": {"Fn::GetAtt": ["Queue1", "Arn"]}` + mapping + `}},
  "Queue1": {"Type": "AWS::SQS::Queue", "Properties": {"SqsManagedSseEnabled": true` + queue + `}},
  "DLQ1": {"Type": "AWS::SQS::Queue", "Properties": {}},
  "DLQAlarm": {"Type": "AWS::CloudWatch::Alarm", "Properties": {"Namespace": "AWS/SQS", "MetricName": "ApproximateNumberOfMessagesVisible",
    "Dimensions": [{"Name": "QueueName", "Value": {"Fn::GetAtt": ["DLQ1", "QueueName"]}}], "Threshold": 0, "ComparisonOperator": "GreaterThanThreshold"}},
  "OtherAlarm": {"Type": "AWS::CloudWatch::Alarm", "Properties": {"Namespace": "AWS/SQS", "MetricName": "ApproximateNumberOfMessagesVisible",
    "Dimensions": [{"Name": "QueueName", "Value": {"Fn::GetAtt": ["Queue1", "QueueName"]}}], "Threshold": 0, "ComparisonOperator": "GreaterThanThreshold"}}
}}`)
}

func TestEventSourceOf(t *testing.T) {
	alarms := []Alarm{{ID: "DLQAlarm", Comparison: "GreaterThanThreshold"}}
	for _, tc := range []struct {
		name, mapping, queue string
		want                 EventSource
		wantErr              string
	}{
		{"the stock settings", `, "BatchSize": 1, "FunctionResponseTypes": ["ReportBatchItemFailures"]`,
			`, "VisibilityTimeout": 5400, "RedrivePolicy": {"deadLetterTargetArn": {"Fn::GetAtt": ["DLQ1", "Arn"]}, "maxReceiveCount": 5}`,
			EventSource{BatchSize: 1, ReportBatchItemFailures: true, Visibility: 5400 * time.Second, MaxReceives: 5, Queue: "Queue1", DeadLetterQueue: "DLQ1", Alarms: alarms}, ""},
		{"AWS's defaults", ``, ``, EventSource{Queue: "Queue1"}, ""},
		{"the redrive policy as JSON text", ``, `, "RedrivePolicy": "{\"deadLetterTargetArn\": {\"Fn::GetAtt\": [\"DLQ1\", \"Arn\"]}, \"maxReceiveCount\": \"3\"}"`,
			EventSource{MaxReceives: 3, Queue: "Queue1", DeadLetterQueue: "DLQ1", Alarms: alarms}, ""},
		{"a redrive policy without its count", ``, `, "RedrivePolicy": {"deadLetterTargetArn": {"Fn::GetAtt": ["DLQ1", "Arn"]}}`,
			EventSource{}, "maxReceiveCount"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := EventSourceOf(templateOf(tc.mapping, tc.queue), "DeliverFunction")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one about %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	if _, err := EventSourceOf(templateOf("", ""), "LiveFunction"); err == nil {
		t.Fatal("a function without an event source mapping was accepted")
	}
}

func TestAlarmBreached(t *testing.T) {
	for _, tc := range []struct {
		cmp  string
		v    float64
		want bool
	}{
		{"GreaterThanThreshold", 0, false}, {"GreaterThanThreshold", 1, true},
		{"GreaterThanOrEqualToThreshold", 0, true}, {"LessThanThreshold", 0, false}, {"LessThanOrEqualToThreshold", 0, true},
	} {
		if got := (Alarm{Comparison: tc.cmp}).Breached(tc.v); got != tc.want {
			t.Errorf("%s with %v: %v, want %v", tc.cmp, tc.v, got, tc.want)
		}
	}
}
