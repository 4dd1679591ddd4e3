package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/jsii-runtime-go"
)

// createScheduleFunction defines the schedule function and the one-minute rule invoking it: it
// starts the builds that can start (scheduler tick), fails silent builds and stops their
// execution and CodeBuild build, enqueues due deliveries, drives the Windows hosts (winhosts.go:
// publishes WaitingWin64Builds, ends the hosts that are done) and once a day deletes expired
// artifacts (record and object together; see createBucket).
func (s *KilnStack) createScheduleFunction() {
	f := s.newFunction(functionSpec{
		name: "schedule", description: "kiln scheduler: one tick a minute", memoryMB: 512,
		timeout: awscdk.Duration_Seconds(jsii.Number(55)),
	})
	s.table.GrantReadWriteData(f.role)
	s.githubApp.GrantRead(f.role, nil) // the final commit status of a silent build it fails
	f.allow([]string{"s3:DeleteObject"}, s.artifactObjectsArn())
	// The janitor also removes the build caches of deleted projects: it lists caches/ for them.
	s.allowListing(f, ArtifactsPrefix+"/"+CachesPrefix)
	// Its tick starts the builds that can start now (scheduled builds, builds a slot freed):
	// one execution each, as the API does for a trigger.
	f.allow([]string{"states:StartExecution"}, s.workflow.StateMachineArn())
	f.allow([]string{"states:StopExecution"}, s.executionsArn())
	// BatchGetBuilds first: a CodeBuild build is stopped only once it is known to host that build.
	f.allow([]string{"codebuild:BatchGetBuilds", "codebuild:StopBuild"}, s.hostProject.ProjectArn())
	s.queue.GrantSendMessages(f.role)
	s.allowHostGroupsControl(f)
	awsevents.NewRule(s.Stack, jsii.String("ScheduleRule"), &awsevents.RuleProps{
		Description: jsii.String("kiln: the scheduler's tick"),
		Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Minutes(jsii.Number(1))),
		Targets: &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(f.fn, &awseventstargets.LambdaFunctionProps{
			DeadLetterQueue: s.eventsDLQ,
			// A missed tick is made up by the next one.
			RetryAttempts: jsii.Number(0),
		})},
	})
}
