package dynamostore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/guregu/dynamo/v2"
)

// listQuery is one Query on a partition of the table or of a GSI: the items whose sort key starts
// with a prefix (or, with skBefore, sorts before a value; with neither, the whole partition),
// optionally narrowed by equality filters.
type listQuery struct {
	index    string // "" for the table itself
	pkAttr   string
	skAttr   string
	pk       string
	skPrefix string
	skBefore string // when set, the sort key is below it (and skPrefix is ignored)
	skAfter  string // when set, the sort key is above it (and skPrefix is ignored)
	forward  bool   // ascending sort key order; false is newest first
	filters  []eqFilter
	// start is the ExclusiveStartKey: the full key (table and index attributes) of the item after
	// which the page begins, or nil for the first page.
	start map[string]types.AttributeValue
}

// eqFilter keeps items whose attribute equals value (a FilterExpression term).
type eqFilter struct{ attr, value string }

// filterPageSize is how many items a filtered query reads per request at least, so that a selective
// filter does not cost one round trip per matching item.
const filterPageSize = 50

// queryPage runs q until it has n matching items and knows whether more follow, or the partition
// ends. It returns at most n items and, when more follow, the id (by id) of the last item returned:
// the caller rebuilds the ExclusiveStartKey of the next page from it. n < 1 reads the whole
// partition.
func queryPage[I any](ctx context.Context, s *Store, q listQuery, n int, id func(*I) string) ([]*I, string, error) {
	names := map[string]string{"#pk": q.pkAttr}
	values := map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: q.pk}}
	// DynamoDB refuses names and values the expressions do not use, so #sk and :sk are only
	// declared with a sort key condition.
	keyCond := "#pk = :pk"
	switch {
	case q.skBefore != "":
		keyCond += " AND #sk < :sk"
		names["#sk"], values[":sk"] = q.skAttr, &types.AttributeValueMemberS{Value: q.skBefore}
	case q.skAfter != "":
		keyCond += " AND #sk > :sk"
		names["#sk"], values[":sk"] = q.skAttr, &types.AttributeValueMemberS{Value: q.skAfter}
	case q.skPrefix != "":
		keyCond += " AND begins_with(#sk, :sk)"
		names["#sk"], values[":sk"] = q.skAttr, &types.AttributeValueMemberS{Value: q.skPrefix}
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.name),
		KeyConditionExpression:    aws.String(keyCond),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ScanIndexForward:          aws.Bool(q.forward),
		ExclusiveStartKey:         q.start,
	}
	if q.index != "" {
		in.IndexName = aws.String(q.index)
	} else {
		in.ConsistentRead = aws.Bool(true) // GSIs only offer eventually consistent reads
	}
	filter := ""
	for i, f := range q.filters {
		if i > 0 {
			filter += " AND "
		}
		filter += fmt.Sprintf("#f%d = :f%d", i, i)
		names[fmt.Sprintf("#f%d", i)] = f.attr
		values[fmt.Sprintf(":f%d", i)] = &types.AttributeValueMemberS{Value: f.value}
	}
	if filter != "" {
		in.FilterExpression = aws.String(filter)
	}

	var out []*I
	for {
		if n > 0 {
			// Ask for one more than needed: if it comes, there is a next page.
			want := n + 1 - len(out)
			if filter != "" {
				want = max(want, filterPageSize)
			}
			in.Limit = aws.Int32(int32(want))
		}
		res, err := s.db.Client().Query(ctx, in)
		if err != nil {
			return nil, "", err
		}
		for _, raw := range res.Items {
			item := new(I)
			if err := dynamo.UnmarshalItem(raw, item); err != nil {
				return nil, "", err
			}
			out = append(out, item)
			if n > 0 && len(out) > n {
				return out[:n], id(out[n-1]), nil
			}
		}
		if len(res.LastEvaluatedKey) == 0 {
			return out, "", nil
		}
		in.ExclusiveStartKey = res.LastEvaluatedKey
	}
}

// startKey builds an ExclusiveStartKey from attribute name/value pairs, or nil when after is empty
// (the first page).
func startKey(after string, pairs ...string) map[string]types.AttributeValue {
	if after == "" {
		return nil
	}
	key := make(map[string]types.AttributeValue, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		key[pairs[i]] = &types.AttributeValueMemberS{Value: pairs[i+1]}
	}
	return key
}

// orgPageQuery is the query, newest first, of the organization's items whose sort key starts with
// prefix, from the page after the item whose id is after and sort key afterSK (after "" for the
// first page).
func orgPageQuery(orgID, prefix, after, afterSK string) listQuery {
	return listQuery{
		pkAttr: attrPK, skAttr: attrSK, pk: orgPK(orgID), skPrefix: prefix,
		start: startKey(after, attrPK, orgPK(orgID), attrSK, afterSK),
	}
}
