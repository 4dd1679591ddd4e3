package stepfunctions

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/aws/smithy-go"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/workflow/sfn"
)

// throttledParams throttles the first left Puts as Parameter Store does past the account's
// PutParameter rate (ThrottlingException, after the SDK's own retries).
type throttledParams struct {
	sfn.HostCredentials
	mu   sync.Mutex
	left int
}

func (p *throttledParams) Put(ctx context.Context, name, value string) error {
	p.mu.Lock()
	throttle := p.left > 0
	p.left--
	p.mu.Unlock()
	if throttle {
		return fmt.Errorf("operation error SSM: PutParameter, exceeded maximum number of attempts, 3: %w",
			&smithy.GenericAPIError{Code: "ThrottlingException", Message: "Rate exceeded"})
	}
	return p.HostCredentials.Put(ctx, name, value)
}

// TestAThrottledClaimIsRetried: a claim whose PutParameter AWS throttles fails with
// ErrorThrottled, which the Claim state retries with its backoff instead of giving the build up
// (GiveUp): the build runs to its end.
func TestAThrottledClaimIsRetried(t *testing.T) {
	w := newWorld(t, worldOptions{throttledPuts: 2})
	b := w.trigger(t, w.setting(t, kiln.PlatformLinux, "5.3", 0), hostComplete)
	got := w.waitFor(t, b.ID, "its end", func(b *kiln.Build) bool { return b.Status.Terminal() })
	if got.Status != kiln.StatusComplete {
		t.Fatalf("build %s (%q), want complete after the throttled claims were retried", got.Status, got.FailureReason)
	}
	if status := w.execution(t, b.ID); status != "SUCCEEDED" {
		t.Errorf("execution ended %s", status)
	}
	w.noCredentialLeft(t)
}
