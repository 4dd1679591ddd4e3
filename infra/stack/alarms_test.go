package stack_test

import (
	"testing"
)

func TestAlarms(t *testing.T) {
	topic := ref(logicalID(t, "AWS::SNS::Topic"))
	machine := ref(logicalID(t, "AWS::StepFunctions::StateMachine"))
	dim := func(name string, value any) []any { return []any{obj{"Name": name, "Value": value}} }
	type metric struct {
		namespace, name, statistic string
		dimensions                 []any
	}
	want := map[string]metric{
		"DeliveryDeadLetterAlarm": {"AWS/SQS", "ApproximateNumberOfMessagesVisible", "Maximum", dim("QueueName", obj{"Fn::GetAtt": []any{queueID(t, "DeliveryDeadLetterQueue"), "QueueName"}})},
		"EventsDeadLetterAlarm":   {"AWS/SQS", "ApproximateNumberOfMessagesVisible", "Maximum", dim("QueueName", obj{"Fn::GetAtt": []any{queueID(t, "EventsDeadLetterQueue"), "QueueName"}})},
		"ExecutionsFailedAlarm":   {"AWS/States", "ExecutionsFailed", "Sum", dim("StateMachineArn", machine)},
		"ExecutionsTimedOutAlarm": {"AWS/States", "ExecutionsTimedOut", "Sum", dim("StateMachineArn", machine)},
	}
	for name, id := range functionConstructIDs {
		want[id+"ErrorsAlarm"] = metric{"AWS/Lambda", "Errors", "Sum", dim("FunctionName", ref(functionLogicalID(t, name)))}
	}
	for id, m := range want {
		t.Run(id, func(t *testing.T) {
			a := resources(t, "AWS::CloudWatch::Alarm")[idOf(t, "AWS::CloudWatch::Alarm", id)]["Properties"].(obj)
			got := obj{}
			for _, k := range []string{"Namespace", "MetricName", "Statistic", "Dimensions", "Threshold", "ComparisonOperator", "EvaluationPeriods", "AlarmActions", "TreatMissingData"} {
				got[k] = a[k]
			}
			wantProps := obj{
				"Namespace": m.namespace, "MetricName": m.name, "Statistic": m.statistic, "Dimensions": m.dimensions,
				// The first one is worth a look.
				"Threshold": 0, "ComparisonOperator": "GreaterThanThreshold", "EvaluationPeriods": 1,
				"AlarmActions": []any{topic}, "TreatMissingData": "notBreaching",
			}
			if !equalJSON(got, wantProps) {
				t.Errorf("alarm\n got %s\nwant %s", jsonString(got), jsonString(wantProps))
			}
		})
	}
}
