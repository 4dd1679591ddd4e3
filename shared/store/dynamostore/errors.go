package dynamostore

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/guregu/dynamo/v2"
)

// wrap gives a backend error the operation it failed in. Domain errors pass through unchanged.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("dynamostore: %s: %w", op, err)
}

// isNotFound reports whether a GetItem found nothing.
func isNotFound(err error) bool { return errors.Is(err, dynamo.ErrNotFound) }

// isCondFailed reports whether a single-item conditional write failed its condition.
func isCondFailed(err error) bool {
	var ce *types.ConditionalCheckFailedException
	return errors.As(err, &ce)
}

// txFailedAt returns the positions, in the order the transaction listed its writes, of the writes
// whose condition failed, or nil when err is not a cancelled transaction with failed conditions.
func txFailedAt(err error) []int {
	var te *types.TransactionCanceledException
	if !errors.As(err, &te) {
		return nil
	}
	var at []int
	for i, r := range te.CancellationReasons {
		if r.Code != nil && *r.Code == "ConditionalCheckFailed" {
			at = append(at, i)
		}
	}
	return at
}

// isTxConflict reports whether a transaction was cancelled because another one was writing the
// same items at the same time; such a transaction may simply be tried again.
func isTxConflict(err error) bool {
	var te *types.TransactionCanceledException
	if !errors.As(err, &te) {
		return false
	}
	for _, r := range te.CancellationReasons {
		if r.Code != nil && *r.Code == "TransactionConflict" {
			return true
		}
	}
	return false
}
