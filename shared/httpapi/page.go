package httpapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// DefaultLimit is the page size when a list request gives none.
const DefaultLimit = 25

// parsePage reads limit and cursor. The query names the list and its filters; a cursor is only
// accepted for the same organization and query it was issued for.
func (s *Server) parsePage(r *http.Request, orgID, query string) (store.Page, error) {
	p := store.Page{Limit: DefaultLimit}
	q := r.URL.Query()
	if v, ok := q["limit"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || n <= 0 {
			return p, kiln.FieldError(kiln.EValidation, "limit must be a positive whole number",
				"limit", "must be a positive whole number (at most 100)")
		}
		p.Limit = min(n, store.MaxLimit)
	}
	if c := q.Get("cursor"); c != "" {
		after, err := s.cursors.decode(orgID, query, c)
		if err != nil {
			return p, err
		}
		p.After = after
	}
	return p, nil
}

// writePage answers a list request with one page of items: the page asked for (its cursor bound
// to orgID and query), read by list and rendered item by item, with the cursor of the next page.
func writePage[T, B any](s *Server, w http.ResponseWriter, r *http.Request, orgID, query string,
	list func(context.Context, store.Page) ([]T, string, error), render func(T) B) error {
	page, err := s.parsePage(r, orgID, query)
	if err != nil {
		return err
	}
	items, next, err := list(r.Context(), page)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderList(items, s.cursors.encode(orgID, query, next), render))
	return nil
}

func itoa(n int) string { return strconv.Itoa(n) }
