package dynamostore

import (
	"context"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// readItem is one consistent GetItem of the item pk/sk into out. The error is dynamo's, unwrapped
// (dynamo.ErrNotFound when there is no such item), for callers that treat a missing item their
// own way.
func (s *Store) readItem(ctx context.Context, pk, sk string, out any) error {
	return s.table.Get(attrPK, pk).Range(attrSK, dynamo.Equal, sk).Consistent(true).One(ctx, out)
}

// getItem reads the item pk/sk with one consistent GetItem. A missing item is not_found for kind;
// any other failure is wrapped with op.
func getItem[I any](ctx context.Context, s *Store, op, kind, pk, sk string) (*I, error) {
	it := new(I)
	err := s.readItem(ctx, pk, sk, it)
	if isNotFound(err) {
		return nil, kiln.NotFound(kind)
	}
	if err != nil {
		return nil, wrap(op, err)
	}
	return it, nil
}

// values turns stored items into the domain values they hold.
func values[I, T any](items []*I, value func(*I) *T) []*T {
	out := make([]*T, len(items))
	for i, it := range items {
		out[i] = value(it)
	}
	return out
}

// list runs queryPage for up to n items (n < 1: all of them) and returns their domain values and
// the cursor of the next page; a failure is wrapped with op.
func list[I, T any](ctx context.Context, s *Store, op string, q listQuery, n int,
	id func(*I) string, value func(*I) *T) ([]*T, string, error) {
	items, next, err := queryPage(ctx, s, q, n, id)
	if err != nil {
		return nil, "", wrap(op, err)
	}
	return values(items, value), next, nil
}

// listAll is list without a cursor: the items of q up to n (n < 1: all of them), for reads that
// are not paged by the caller.
func listAll[I, T any](ctx context.Context, s *Store, op string, q listQuery, n int, value func(*I) *T) ([]*T, error) {
	out, _, err := list(ctx, s, op, q, n, func(*I) string { return "" }, value)
	return out, err
}

// get is getItem's item as the domain value it holds.
func get[I, T any](ctx context.Context, s *Store, op, kind, pk, sk string, value func(*I) *T) (*T, error) {
	it, err := getItem[I](ctx, s, op, kind, pk, sk)
	if err != nil {
		return nil, err
	}
	return value(it), nil
}
