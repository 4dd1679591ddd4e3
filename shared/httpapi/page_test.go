package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// TestWritePageWalksAListByItsCursor pages through a list of five ids two at a time: each page is
// rendered in order with the cursor of the next, and a cursor is refused for another list.
func TestWritePageWalksAListByItsCursor(t *testing.T) {
	s := &Server{cursors: cursors{key: []byte("0123456789abcdef0123456789abcdef")}}
	all := []string{"e", "d", "c", "b", "a"}
	var asked []store.Page
	list := func(_ context.Context, p store.Page) ([]string, string, error) {
		asked = append(asked, p)
		from := 0
		for from < len(all) && p.After != "" && all[from] >= p.After {
			from++
		}
		to := min(len(all), from+p.Limit)
		if to == len(all) {
			return all[from:to], "", nil
		}
		return all[from:to], all[to-1], nil
	}
	get := func(query, target string) (*httptest.ResponseRecorder, error) {
		w := httptest.NewRecorder()
		err := writePage(s, w, httptest.NewRequest(http.MethodGet, target, nil), "org1", query, list, strings.ToUpper)
		return w, err
	}

	var got []string
	target := "/things?limit=2"
	for range 3 {
		w, err := get("things", target)
		if err != nil || w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d, %v", target, w.Code, err)
		}
		var body api.List[string]
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatalf("GET %s: %v", target, err)
		}
		got = append(got, body.Items...)
		if body.NextCursor == nil {
			break
		}
		target = "/things?limit=2&cursor=" + *body.NextCursor
	}
	if strings.Join(got, "") != "EDCBA" || len(asked) != 3 || asked[1] != (store.Page{Limit: 2, After: "d"}) {
		t.Fatalf("pages gave %v after asking %v", got, asked)
	}

	asked = nil
	if _, err := get("other things", target); !kiln.IsCode(err, kiln.EValidation) || asked != nil {
		t.Fatalf("a cursor of another list: %v, list asked %v", err, asked)
	}
}
