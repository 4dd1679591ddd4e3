package awslocalapp

import (
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/kilnbuild/kiln/shared/awscost"
	"github.com/kilnbuild/kiln/shared/awslocal/iam"
	"github.com/kilnbuild/kiln/shared/awslocal/meter"
)

// BackgroundPrincipals are the principals whose use is not a build's: the schedule function runs
// once a minute whatever the builds (its cost is a month's, not a build's), and build host time
// is counted apart from the control plane.
var BackgroundPrincipals = []string{"schedule", meter.HostPrincipal}

// awsMeter is aws-local's meter: every AWS call that passed the IAM check, by principal, in
// AWS's billing units, priced at us-east-1's on-demand prices. At each execution's end it logs
// the control plane's cost per build so far: everything counted since aws-local started but the
// background principals', divided by the executions ended (an average: calls carry no build id).
type awsMeter struct {
	*meter.Meter
	functions map[string]meter.Function
	auth      *iam.Authorizer
	logger    *slog.Logger
	mu        sync.Mutex
	ended     int
}

func newAWSMeter(auth *iam.Authorizer, t *iam.Template, logger *slog.Logger) (*awsMeter, error) {
	configs, err := t.FunctionConfigs()
	if err != nil {
		return nil, err
	}
	m := &awsMeter{Meter: meter.New(), functions: map[string]meter.Function{}, auth: auth, logger: logger}
	for name, c := range configs {
		m.functions[name] = meter.Function{MemoryMB: c.MemoryMB, Architecture: awscost.Architecture(c.Architecture)}
	}
	return m, nil
}

// who names a request's principal: the role whose key signed it, else the operator.
func (m *awsMeter) who(r *http.Request) string {
	if p := m.auth.Principal(iam.KeyID(r)); p != nil {
		return p.Name
	}
	return "operator"
}

// fn wraps a function's handler, metered as the template configures the function.
func (m *awsMeter) fn(name string, h lambda.Handler, also ...func([]byte) (string, awscost.Usage)) lambda.Handler {
	return m.Lambda(name, m.functions[name], h, also...)
}

// handlers wraps every function of the Lambda Invoke API.
func (m *awsMeter) handlers(byName map[string]any) map[string]any {
	out := make(map[string]any, len(byName))
	for name, h := range byName {
		out[name] = m.fn(name, lambda.NewHandler(h))
	}
	return out
}

// sqsEventSource is what Lambda's SQS event source bills the deliver function's role for each
// message it hands over: its ReceiveMessage (the message's 64 KB chunks) and DeleteMessage.
// The event source's empty long polls, which go on whatever the builds, are not counted.
func sqsEventSource() []func([]byte) (string, awscost.Usage) {
	return []func([]byte) (string, awscost.Usage){
		func(p []byte) (string, awscost.Usage) { return "sqs:ReceiveMessage", awscost.SQSRequest(int64(len(p))) },
		func([]byte) (string, awscost.Usage) { return "sqs:DeleteMessage", awscost.SQSRequest(0) },
	}
}

// executionEnded counts an execution's state transitions and logs the cost per build so far.
func (m *awsMeter) executionEnded(arn string, transitions int) {
	m.Transitions(iam.StateMachinePrincipal, transitions)
	m.mu.Lock()
	m.ended++
	ended := m.ended
	m.mu.Unlock()
	all := m.Read()
	per := all.Without(BackgroundPrincipals...).Scale(1 / float64(ended))
	cost := awscost.USEast1.Cost(per.Total())
	attrs := []any{slog.String("build_id", arn[strings.LastIndex(arn, ":")+1:]), slog.Int("transitions", transitions),
		slog.Int("executions_ended", ended), slog.Float64("usd_per_build", cost.Total),
		slog.Float64("host_minutes_per_build", all[meter.HostPrincipal].Usage.HostSeconds/60/float64(ended)),
		slog.Float64("schedule_usd_so_far", awscost.USEast1.Cost(all["schedule"].Usage).Total)}
	if top := per.Spenders(awscost.USEast1); len(top) > 0 && cost.Total > 0 {
		service, _ := top[0].Cost.Largest()
		attrs = append(attrs, slog.String("top_principal", top[0].Name), slog.Float64("top_share", top[0].Cost.Total/cost.Total),
			slog.String("top_service", service))
	}
	m.logger.Info("aws-local meter: a build ended; the control plane's cost per build so far (us-east-1 on-demand prices, host time apart)", attrs...)
}

// executions is how many executions have reported their transitions.
func (m *awsMeter) executions() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ended
}
