package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

// createAdminFunction defines the admin function: operators invoke it (console, `aws lambda
// invoke` with events/admin-bootstrap.json) to create the first organization and owner without a
// database file. Nothing triggers it.
func (s *KilnStack) createAdminFunction() {
	f := s.newFunction(functionSpec{
		name: "admin", description: "kiln administration: invoked by operators", memoryMB: 256,
		timeout: awscdk.Duration_Seconds(jsii.Number(60)),
	})
	s.table.GrantReadWriteData(f.role)
	s.masterKey.GrantRead(f.role, nil)
}
