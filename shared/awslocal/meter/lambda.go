package meter

import (
	"context"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/kilnbuild/kiln/shared/awscost"
)

// Function is how a function is configured (the stack's template gives it): its memory and
// architecture, which its GB-seconds are priced by.
type Function struct {
	MemoryMB     int
	Architecture awscost.Architecture
}

// Lambda wraps a function's handler: each invocation is a request and its duration × the
// function's memory, counted under the function's name (a function pays for its own runs,
// whoever invoked it). also is what else an invocation is billed for (an SQS event source's
// receive and delete), counted under the function too.
func (m *Meter) Lambda(name string, fn Function, h lambda.Handler, also ...func(payload []byte) (string, awscost.Usage)) lambda.Handler {
	return invoked{meter: m, name: name, fn: fn, next: h, also: also}
}

type invoked struct {
	meter *Meter
	name  string
	fn    Function
	next  lambda.Handler
	also  []func([]byte) (string, awscost.Usage)
}

func (i invoked) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	start := time.Now()
	defer func() {
		i.meter.Add(i.name, "lambda:run", awscost.LambdaInvocation(time.Since(start), i.fn.MemoryMB, i.fn.Architecture))
		for _, f := range i.also {
			action, u := f(payload)
			i.meter.Add(i.name, action, u)
		}
	}()
	return i.next.Invoke(ctx, payload)
}

// Transitions counts a state machine execution's state transitions under principal (the state
// machine's role).
func (m *Meter) Transitions(principal string, n int) {
	m.Add(principal, "states:transitions", awscost.Usage{StateTransitions: float64(n)})
}

// APIGateway counts each request to the HTTP API (a request per 512 KB of its body) under
// principal (the API function, whose requests they are).
func (m *Meter) APIGateway(principal string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.Add(principal, "apigateway:request", awscost.APIGatewayRequest(max(0, r.ContentLength)))
		next.ServeHTTP(w, r)
	})
}
