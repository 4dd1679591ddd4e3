package githubtest

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// page applies GitHub's offset paging (per_page, default 30, at most 100; page from 1) to a list
// of n items: it sets the Link header (rel="next", "last", "first", "prev") and returns the slice
// bounds of the requested page.
func page(w http.ResponseWriter, r *http.Request, n int) (lo, hi int) {
	q := r.URL.Query()
	per, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || per <= 0 {
		per = 30
	}
	per = min(per, 100)
	p, err := strconv.Atoi(q.Get("page"))
	if err != nil || p <= 0 {
		p = 1
	}
	last := max(1, (n+per-1)/per)
	link := func(pg int, rel string) string {
		// RequestURI still holds the /api/v3 prefix that routing stripped from r.URL.
		u, _ := url.ParseRequestURI(r.RequestURI)
		u.Scheme, u.Host = "http", r.Host
		v := u.Query()
		v.Set("page", strconv.Itoa(pg))
		v.Set("per_page", strconv.Itoa(per))
		u.RawQuery = v.Encode()
		return fmt.Sprintf("<%s>; rel=%q", u.String(), rel)
	}
	var links []string
	if p < last {
		links = append(links, link(p+1, "next"), link(last, "last"))
	}
	if p > 1 {
		links = append(links, link(1, "first"), link(p-1, "prev"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	lo = min((p-1)*per, n)
	return lo, min(lo+per, n)
}
