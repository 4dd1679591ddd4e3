package dynamostore

import (
	"context"
	"fmt"
	"time"

	"github.com/guregu/dynamo/v2"
)

// tableLayout declares the table's key schema for CreateTable: PK/SK and four GSIs, each keyed by
// a string partition and sort key and projecting all attributes.
type tableLayout struct {
	PK     string `dynamo:"PK,hash"`
	SK     string `dynamo:"SK,range"`
	GSI1PK string `index:"GSI1,hash"`
	GSI1SK string `index:"GSI1,range"`
	GSI2PK string `index:"GSI2,hash"`
	GSI2SK string `index:"GSI2,range"`
	GSI3PK string `index:"GSI3,hash"`
	GSI3SK string `index:"GSI3,range"`
	GSI4PK string `index:"GSI4,hash"`
	GSI4SK string `index:"GSI4,range"`
}

// tableActiveTimeout bounds how long CreateTable waits for the table to become ACTIVE.
const tableActiveTimeout = 5 * time.Minute

// CreateTable creates the table (on-demand billing) and waits until it and its indexes are ACTIVE.
func CreateTable(ctx context.Context, db *dynamo.DB, table string) error {
	err := db.CreateTable(table, tableLayout{}).
		OnDemand(true).
		Project(indexGSI1, dynamo.AllProjection).
		Project(indexGSI2, dynamo.AllProjection).
		Project(indexGSI3, dynamo.AllProjection).
		Project(indexGSI4, dynamo.AllProjection).
		Run(ctx)
	if err != nil {
		return fmt.Errorf("dynamostore: create table %s: %w", table, err)
	}
	// Poll rather than Table.Wait, which sleeps 20 seconds before its first look.
	ctx, cancel := context.WithTimeout(ctx, tableActiveTimeout)
	defer cancel()
	delay := 50 * time.Millisecond
	for {
		desc, err := db.Table(table).Describe().Run(ctx)
		if err != nil {
			return fmt.Errorf("dynamostore: describe table %s: %w", table, err)
		}
		if active(desc) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("dynamostore: table %s did not become active: %w", table, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(2*delay, 2*time.Second)
	}
}

// active reports whether the table and all its indexes can be used.
func active(desc dynamo.Description) bool {
	if desc.Status != dynamo.ActiveStatus {
		return false
	}
	for _, gsi := range desc.GSI {
		if gsi.Status != dynamo.ActiveStatus {
			return false
		}
	}
	return true
}
