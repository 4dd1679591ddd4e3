package dynamostore

import (
	"context"

	"github.com/guregu/dynamo/v2"
)

// updateFields writes the attributes named in fields from item onto the stored item with key
// pk/sk, removing those that item leaves out, only if the stored item exists (a failed condition,
// see isCondFailed, means it does not). Keys and attributes not named stay as they are.
func (s *Store) updateFields(ctx context.Context, pk, sk string, item any, fields []string) error {
	u, err := s.fieldsUpdate(pk, sk, item, fields)
	if err != nil {
		return err
	}
	return u.If("attribute_exists($)", attrPK).Run(ctx)
}

// fieldsUpdate is the update of the stored item pk/sk that sets fields from item and removes
// those item leaves out; the caller adds its conditions and runs it.
func (s *Store) fieldsUpdate(pk, sk string, item any, fields []string) (*dynamo.Update, error) {
	av, err := dynamo.MarshalItem(item)
	if err != nil {
		return nil, err
	}
	u := s.table.Update(attrPK, pk).Range(attrSK, sk)
	var remove []string
	for _, f := range fields {
		if v, ok := av[f]; ok {
			u.Set(f, v)
		} else {
			remove = append(remove, f)
		}
	}
	if len(remove) > 0 {
		u.Remove(remove...)
	}
	return u, nil
}

// notExists is the condition of a put that must not overwrite an item.
const notExists = "attribute_not_exists($)"

// exists is the condition of a write to an item that must be there.
const exists = "attribute_exists($)"
