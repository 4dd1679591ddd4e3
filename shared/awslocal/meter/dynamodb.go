package meter

import (
	"encoding/json"
	"hash/crc32"
	"net/http"
	"strconv"

	"github.com/kilnbuild/kiln/shared/awscost"
)

// readOps and writeOps are DynamoDB's item operations, billed in read and write request units;
// its other operations (CreateTable, DescribeTable, ListTables) are not billed per call.
var (
	readOps  = map[string]bool{"GetItem": true, "BatchGetItem": true, "Query": true, "Scan": true, "TransactGetItems": true}
	writeOps = map[string]bool{"PutItem": true, "UpdateItem": true, "DeleteItem": true, "BatchWriteItem": true, "TransactWriteItems": true}
)

// DynamoDB counts each item operation's request units as DynamoDB reports them: it asks for
// them (ReturnConsumedCapacity INDEXES, so that global secondary indexes' writes are in), reads
// the ConsumedCapacity of the answer and, if the caller did not ask for it, takes it out again.
// DynamoDB Local computes them as DynamoDB does (4 KB per strongly consistent read unit, half for
// an eventually consistent read, 1 KB per write unit, twice in a transaction). A write refused
// (a condition that failed) answers no ConsumedCapacity; DynamoDB still bills it, at least one
// write unit an item, which is what is counted.
func (m *Meter) DynamoDB(who Who, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := readBody(r)
		op := operation(r, body)
		read, write := readOps[op], writeOps[op]
		if !read && !write {
			m.Add(who(r), "dynamodb:"+op, awscost.Usage{FreeRequests: 1})
			next.ServeHTTP(w, r)
			return
		}
		var in map[string]json.RawMessage
		asked := true
		if json.Unmarshal(body, &in) == nil && in != nil {
			var rcc string
			_ = json.Unmarshal(in["ReturnConsumedCapacity"], &rcc)
			if rcc == "" || rcc == "NONE" {
				asked = false
				in["ReturnConsumedCapacity"] = json.RawMessage(`"INDEXES"`)
				if b, err := json.Marshal(in); err == nil {
					body = b
				}
			}
		}
		r.Body = nopCloser(body)
		r.ContentLength = int64(len(body))
		r.Header.Set("Content-Length", itoa(len(body)))
		rec := newRecorder()
		next.ServeHTTP(rec, r)
		out := rec.body.Bytes()
		units, reported := consumed(out)
		if !reported && write {
			units = float64(max(1, items(op, in)))
		}
		u := awscost.Usage{DynamoDBReadUnits: units}
		if write {
			u = awscost.Usage{DynamoDBWriteUnits: units}
		}
		m.Add(who(r), "dynamodb:"+op, u)
		if !asked && reported {
			var doc map[string]json.RawMessage
			if json.Unmarshal(out, &doc) == nil {
				delete(doc, "ConsumedCapacity")
				if b, err := json.Marshal(doc); err == nil {
					out = b
					if rec.header.Get("X-Amz-Crc32") != "" { // the SDK checks the body against it
						rec.header.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(out)), 10))
					}
				}
			}
		}
		rec.sendTo(w, out)
	})
}

// capacity is one ConsumedCapacity of an answer.
type capacity struct {
	CapacityUnits          float64
	Table                  *struct{ CapacityUnits float64 }
	GlobalSecondaryIndexes map[string]struct{ CapacityUnits float64 }
	LocalSecondaryIndexes  map[string]struct{ CapacityUnits float64 }
}

// units is the capacity's total: CapacityUnits, or the table's and its indexes' if they add up
// to more.
func (c capacity) units() float64 {
	parts := 0.0
	if c.Table != nil {
		parts += c.Table.CapacityUnits
	}
	for _, i := range c.GlobalSecondaryIndexes {
		parts += i.CapacityUnits
	}
	for _, i := range c.LocalSecondaryIndexes {
		parts += i.CapacityUnits
	}
	return max(c.CapacityUnits, parts)
}

// consumed reads an answer's ConsumedCapacity (one, or a list for batch and transaction
// operations).
func consumed(answer []byte) (float64, bool) {
	var doc struct{ ConsumedCapacity json.RawMessage }
	if json.Unmarshal(answer, &doc) != nil || len(doc.ConsumedCapacity) == 0 {
		return 0, false
	}
	var one capacity
	if json.Unmarshal(doc.ConsumedCapacity, &one) == nil {
		return one.units(), true
	}
	var many []capacity
	if json.Unmarshal(doc.ConsumedCapacity, &many) != nil {
		return 0, false
	}
	total := 0.0
	for _, c := range many {
		total += c.units()
	}
	return total, true
}

// items is how many items a write request writes (a transaction's or a batch's).
func items(op string, in map[string]json.RawMessage) int {
	switch op {
	case "TransactWriteItems":
		var list []json.RawMessage
		_ = json.Unmarshal(in["TransactItems"], &list)
		return 2 * len(list)
	case "BatchWriteItem":
		var tables map[string][]json.RawMessage
		_ = json.Unmarshal(in["RequestItems"], &tables)
		n := 0
		for _, reqs := range tables {
			n += len(reqs)
		}
		return n
	}
	return 1
}
