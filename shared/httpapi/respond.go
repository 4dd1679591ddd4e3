package httpapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/kilnbuild/kiln/shared/api"
)

// timeFormat is RFC 3339 in UTC with milliseconds, as docs/api.md asks.
const timeFormat = api.TimeFormat

// timestamp renders a time for the API.
func timestamp(t time.Time) string { return t.UTC().Format(timeFormat) }

// optionalTimestamp renders a time that may be unset as a string or null.
func optionalTimestamp(t *time.Time) *string {
	if t == nil || t.IsZero() {
		return nil
	}
	s := timestamp(*t)
	return &s
}

// nullable turns a zero value (an empty string, 0) into null.
func nullable[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the client went away; nothing more to do
}

// renderList renders items into a list body; next is the cursor of the next page or nil.
func renderList[T, B any](items []T, next *string, render func(T) B) api.List[B] {
	body := api.List[B]{Items: make([]B, 0, len(items)), NextCursor: next}
	for _, it := range items {
		body.Items = append(body.Items, render(it))
	}
	return body
}
