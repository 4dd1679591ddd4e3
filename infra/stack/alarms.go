package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

// createAlarms defines the alarms docs/deploy.md explains, each notifying the alarm topic:
// messages in a dead-letter queue, failed or timed-out executions, and errors of each function.
// Aborted executions are cancels and supersedes: no alarm.
func (s *KilnStack) createAlarms() {
	s.alarmTopic = awssns.NewTopic(s.Stack, jsii.String("AlarmTopic"), &awssns.TopicProps{
		DisplayName: jsii.String("kiln alarms"),
		// Publishers (CloudWatch alarms) over TLS only: the topic policy denies the rest.
		EnforceSSL: jsii.Bool(true),
	})
	action := awscloudwatchactions.NewSnsAction(s.alarmTopic)
	alarm := func(id, description string, metric awscloudwatch.IMetric) {
		a := awscloudwatch.NewAlarm(s.Stack, jsii.String(id), &awscloudwatch.AlarmProps{
			AlarmDescription:   jsii.String(description),
			Metric:             metric,
			Threshold:          jsii.Number(0),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
			EvaluationPeriods:  jsii.Number(1),
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		a.AddAlarmAction(action)
	}
	fiveMinutes := awscdk.Duration_Minutes(jsii.Number(5))
	dlqDepth := func(q awssqs.Queue) awscloudwatch.IMetric {
		return q.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
			Period: fiveMinutes, Statistic: jsii.String("Maximum"),
		})
	}
	sum := &awscloudwatch.MetricOptions{Period: fiveMinutes, Statistic: jsii.String("Sum")}
	alarm("DeliveryDeadLetterAlarm", "kiln: deliveries failed every attempt of the deliver function (see docs/deploy.md)", dlqDepth(s.deliveryDLQ))
	alarm("EventsDeadLetterAlarm", "kiln: execution-ended or scheduler events were not delivered to their function (see docs/deploy.md)", dlqDepth(s.eventsDLQ))
	alarm("ExecutionsFailedAlarm", "kiln: build executions failed (a task failed; see docs/deploy.md)", s.workflow.MetricFailed(sum))
	alarm("ExecutionsTimedOutAlarm", "kiln: build executions timed out (see docs/deploy.md)", s.workflow.MetricTimedOut(sum))
	for _, name := range Functions {
		alarm(functionID(name)+"ErrorsAlarm", "kiln: the "+name+" function failed (see docs/deploy.md)", s.functions[name].fn.MetricErrors(sum))
	}
}
