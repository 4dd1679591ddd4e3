package stack_test

import (
	"fmt"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// nagged are the stacks TestMain checked with cdk-nag's AwsSolutionsChecks.
var nagged = map[string]awscdk.Stack{}

// TestCDKNag: cdk-nag's AWS Solutions rules report no error on either stack that is not
// suppressed in the stack's code with its reason (nag.go).
func TestCDKNag(t *testing.T) {
	if len(nagged) == 0 {
		t.Fatal("no stack was checked")
	}
	for name, st := range nagged {
		errs := assertions.Annotations_FromStack(st).FindError(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*")))
		for _, e := range *errs {
			t.Errorf("%s %s: %v", name, *e.Id, fmt.Sprint(e.Entry.Data))
		}
	}
}
