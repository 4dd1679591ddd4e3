// Command ended is the Lambda of the rule on build executions that ended FAILED, TIMED_OUT or
// ABORTED: it fails the build if it is still pending or running.
package main

import "github.com/kilnbuild/kiln/shared/compose/awsapp"

func main() {
	awsapp.StartWorkflowLambda(func(fns *awsapp.Functions) any { return fns.Ended.Handle })
}
