package sfn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	dynamotypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/storefixture"
)

// TestAThrottledClaimFailsAsThrottledError: a claim whose PutParameter AWS throttled (after the
// SDK's retries, which wrap the error) fails with an error whose type name, the error name Step
// Functions sees from a Go Lambda, is ErrorThrottled; other failures keep their own name.
func TestAThrottledClaimFailsAsThrottledError(t *testing.T) {
	for _, tt := range []struct {
		name      string
		err       error
		throttled bool
	}{
		{"SSMThrottling", &smithy.GenericAPIError{Code: "ThrottlingException", Message: "Rate exceeded"}, true},
		{"SSMTooManyUpdates", &smithy.GenericAPIError{Code: "TooManyUpdates"}, true},
		{"DynamoDBThroughput", &dynamotypes.ProvisionedThroughputExceededException{Message: aws.String("slow down")}, true},
		{"DynamoDBRequestLimit", &dynamotypes.RequestLimitExceeded{Message: aws.String("account limit")}, true},
		{"DynamoDBTransaction", &dynamotypes.TransactionCanceledException{CancellationReasons: []dynamotypes.CancellationReason{{Code: aws.String("None")}, {Code: aws.String("ThrottlingError")}}}, true},
		{"AfterTheSDKsRetries", &retry.MaxAttemptsError{Attempt: 3, Err: &smithy.OperationError{ServiceID: "SSM", OperationName: "PutParameter",
			Err: &smithy.GenericAPIError{Code: "ThrottlingException"}}}, true},
		{"AccessDenied", &smithy.GenericAPIError{Code: "AccessDeniedException"}, false},
		{"ConditionFailed", &dynamotypes.TransactionCanceledException{CancellationReasons: []dynamotypes.CancellationReason{{Code: aws.String("ConditionalCheckFailed")}}}, false},
		{"Plain", errors.New("connection refused"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st := storefixture.SQLite(t)
			now := time.Now().UTC().Truncate(time.Millisecond)
			org, _ := storefixture.Org(t, st, "", now)
			b := storefixture.Build(t, st, org.ID, kiln.StatusPending, now)
			tasks := &Tasks{Store: st, Lifecycle: &builds.Lifecycle{Builds: st, Projects: st, Artifacts: st}, Images: map[string]string{"5.3": "kiln-engine:5.3"},
				HostURL: "https://kiln.example", TimeLimit: time.Hour,
				Credentials: HostCredentialStore{Path: "/Kiln/hosts", Params: &memParams{values: map[string]string{}, err: fmt.Errorf("operation error: %w", tt.err)}}}
			_, err := tasks.Handle(ctx, TaskInput{Task: TaskClaim, OrganizationID: b.OrganizationID, BuildID: b.ID, Execution: b.ID})
			if err == nil {
				t.Fatal("the claim succeeded with a failing parameter store")
			}
			if got := errorName(err); (got == ErrorThrottled) != tt.throttled {
				t.Errorf("error name %q (%v), want %s: %v", got, err, map[bool]string{true: ErrorThrottled, false: "another"}[tt.throttled], tt.throttled)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("the error %v does not wrap the cause", err)
			}
			if got, _ := st.GetBuild(ctx, b.OrganizationID, b.ID); got.Status != kiln.StatusPending || got.Host != "" {
				t.Errorf("after a failed claim the build is %s on %q, want pending on none", got.Status, got.Host)
			}
		})
	}
}

// errorName is the error name a Go Lambda's error has in Step Functions: aws-lambda-go's
// errorType, its type's name (the pointed-to type's for a pointer).
func errorName(err error) string {
	t := reflect.TypeOf(err)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// TestThrottledTasksRetry: every state that invokes the task Lambda retries ErrorThrottled, with
// a backoff whose longest total wait is ThrottleRetryWait, after Lambda's own transient errors.
func TestThrottledTasksRetry(t *testing.T) {
	type retrier struct {
		ErrorEquals     []string
		IntervalSeconds float64
		MaxAttempts     int
		BackoffRate     float64
		MaxDelaySeconds float64
	}
	var def struct {
		States map[string]struct {
			Resource string
			Retry    []retrier
		}
	}
	if err := json.Unmarshal([]byte(Definition()), &def); err != nil {
		t.Fatal(err)
	}
	lambdaTasks := 0
	for name, s := range def.States {
		if s.Resource != "${"+PlaceholderTaskFunction+"}" && s.Resource != "arn:aws:states:::lambda:invoke.waitForTaskToken" {
			continue
		}
		lambdaTasks++
		i := slices.IndexFunc(s.Retry, func(r retrier) bool { return slices.Contains(r.ErrorEquals, ErrorThrottled) })
		if i < 0 {
			t.Errorf("task %s does not retry %s: %+v", name, ErrorThrottled, s.Retry)
			continue
		}
		r := s.Retry[i]
		if r.IntervalSeconds < 1 || r.BackoffRate < 2 || r.MaxAttempts < 5 || r.MaxDelaySeconds <= 0 {
			t.Errorf("task %s retries %s with %+v: want a capped backoff (interval 1 s or more, rate 2 or more, 5 attempts or more)", name, ErrorThrottled, r)
		}
		total, wait := 0.0, r.IntervalSeconds
		for range r.MaxAttempts {
			total += min(wait, r.MaxDelaySeconds)
			wait *= r.BackoffRate
		}
		if got := time.Duration(total) * time.Second; got != ThrottleRetryWait {
			t.Errorf("task %s: its throttling retries wait %v in all, ThrottleRetryWait says %v", name, got, ThrottleRetryWait)
		}
	}
	if lambdaTasks < 4 {
		t.Errorf("%d states invoke the task Lambda, want at least 4 (claim, finish, host ended, unsupported, await)", lambdaTasks)
	}
}
