package e2e

import "testing"

// Deployment is which kiln a test starts.
type Deployment int

const (
	// Serve is kiln serve: one process, SQLite, builds on this machine.
	Serve Deployment = iota
	// AWSLocal is kiln aws-local: the Lambdas' handlers behind the stand-ins of API Gateway, Step
	// Functions and CodeBuild, on DynamoDB Local and MinIO, every AWS call checked against the
	// stack's IAM policies.
	AWSLocal
)

// Deployments are both, in the order Both runs them.
var Deployments = []Deployment{Serve, AWSLocal}

func (d Deployment) String() string {
	if d == AWSLocal {
		return "aws-local"
	}
	return "serve"
}

// Both runs test once on each deployment, as the parallel subtests "serve" and "aws-local", in
// parallel with the package's other parallel tests. The tests are the same: only the service
// they start differs.
func Both(t *testing.T, test func(t *testing.T, d Deployment)) {
	t.Helper()
	t.Parallel()
	for _, d := range Deployments {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			test(t, d)
		})
	}
}
