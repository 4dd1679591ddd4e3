package sfn

import (
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	dynamotypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ErrorThrottled is the error name Step Functions sees when a task failed because AWS throttled
// one of its calls past the SDK's own retries (Parameter Store's PutParameter, shared by the
// whole account; a DynamoDB table's throughput): the Go Lambda runtime names a function's error
// after its type (aws-lambda-go's errorType), and ThrottledError is that type. Every Lambda task
// of the definition retries it with a longer backoff than Lambda's own errors, instead of giving
// the build up.
const ErrorThrottled = "ThrottledError"

// ThrottledError is a task's error that AWS throttling (or a rate limit) caused: retrying later
// may succeed. Its type name is ErrorThrottled.
type ThrottledError struct{ Err error }

func (e *ThrottledError) Error() string { return "throttled: " + e.Err.Error() }
func (e *ThrottledError) Unwrap() error { return e.Err }

// throttleCodes are the AWS error codes of a call refused for its rate: the SDK's own list
// (Throttling, ThrottlingException, ProvisionedThroughputExceededException, RequestLimitExceeded,
// TooManyRequestsException, LimitExceededException, ...) and Parameter Store's TooManyUpdates
// ("There are concurrent updates for a resource that supports one update at a time", the
// PutParameter error of a parameter written too often).
func throttleCode(code string) bool {
	if _, ok := retry.DefaultThrottleErrorCodes[code]; ok {
		return true
	}
	return code == "TooManyUpdates"
}

// Throttled reports whether err is (or wraps) an AWS error that says the call was throttled:
// an API error with a throttling code, or a DynamoDB transaction cancelled for throttling.
func Throttled(err error) bool {
	var coded interface{ ErrorCode() string }
	if errors.As(err, &coded) && throttleCode(coded.ErrorCode()) {
		return true
	}
	var tx *dynamotypes.TransactionCanceledException
	if errors.As(err, &tx) {
		for _, r := range tx.CancellationReasons {
			if r.Code != nil && (*r.Code == "ThrottlingError" || *r.Code == "ProvisionedThroughputExceeded") {
				return true
			}
		}
	}
	return false
}

// asThrottled gives a task's error the name its Retry takes when AWS throttling caused it.
func asThrottled(err error) error {
	var already *ThrottledError
	if err == nil || errors.As(err, &already) || !Throttled(err) {
		return err
	}
	return &ThrottledError{Err: err}
}
