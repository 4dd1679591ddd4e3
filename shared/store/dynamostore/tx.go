package dynamostore

import (
	"context"
	"time"

	"github.com/guregu/dynamo/v2"
)

// maxTxItems is the most writes one TransactWriteItems takes.
const maxTxItems = 100

// txAttempts bounds how often a transaction cancelled by a concurrent one is tried again.
const txAttempts = 8

// runTx runs the transaction that build makes, again if DynamoDB cancelled it only because another
// transaction touched the same items at the same moment (a failed condition is never retried). The
// error of the last attempt is returned unwrapped, for the caller to translate.
func (s *Store) runTx(ctx context.Context, build func(tx *dynamo.WriteTx)) error {
	delay := 10 * time.Millisecond
	for attempt := 1; ; attempt++ {
		tx := s.db.WriteTx()
		build(tx)
		err := tx.Run(ctx)
		if err == nil || !isTxConflict(err) || txFailedAt(err) != nil || attempt == txAttempts {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay *= 2
	}
}
