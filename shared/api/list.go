package api

// List is one page of a list answer (GET /builds, /projects, ...): the items, and the cursor of
// the next page (null on the last page).
type List[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"nextCursor"`
}
