// Command task is the task Lambda of the builds' state machine: it claims a build for its
// CodeBuild host, and fails a build whose host ended without a result or that no host runs.
package main

import "github.com/kilnbuild/kiln/shared/compose/awsapp"

func main() {
	awsapp.StartWorkflowLambda(func(fns *awsapp.Functions) any { return fns.Task.Handle })
}
