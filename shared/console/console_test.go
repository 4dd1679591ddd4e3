package console

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, path string, header map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func TestServe(t *testing.T) {
	h := MustNew()
	base := h.AssetBase()
	cases := []struct {
		name, method, path string
		header             map[string]string
		status             int
		contentType, cache string
		encoding           string
		bodyHas            string
	}{
		{"the page", "GET", "/console/", nil, 200, "text/html; charset=utf-8", "no-cache", "", base + "js/app.js"},
		{"a route of the page", "GET", "/console/builds/abc", nil, 200, "text/html; charset=utf-8", "no-cache", "", "<main"},
		{"a module", "GET", base + "js/app.js", nil, 200, "text/javascript; charset=utf-8", "public, max-age=31536000, immutable", "", "import"},
		{"the styles, gzipped", "GET", base + "app.css", map[string]string{"Accept-Encoding": "br, gzip"}, 200, "text/css; charset=utf-8", "public, max-age=31536000, immutable", "gzip", "font"},
		{"gzip refused", "GET", base + "app.css", map[string]string{"Accept-Encoding": "gzip;q=0"}, 200, "text/css; charset=utf-8", "public, max-age=31536000, immutable", "", "font"},
		{"another version's file", "GET", "/console/v/0123456789abcdef/js/app.js", nil, 404, "", "no-store", "", ""},
		{"an unknown file", "GET", base + "js/nope.js", nil, 404, "", "no-store", "", ""},
		{"HEAD has no body", "HEAD", "/console/", nil, 200, "text/html; charset=utf-8", "no-cache", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := get(t, h, c.method, c.path, c.header)
			body := readBody(t, resp)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
			}
			for k, want := range map[string]string{"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
				"Referrer-Policy": "no-referrer", "Cache-Control": c.cache, "Content-Encoding": c.encoding} {
				if got := resp.Header.Get(k); got != want {
					t.Errorf("%s: %q, want %q", k, got, want)
				}
			}
			if c.contentType != "" && resp.Header.Get("Content-Type") != c.contentType {
				t.Errorf("Content-Type %q, want %q", resp.Header.Get("Content-Type"), c.contentType)
			}
			if !strings.Contains(body, c.bodyHas) || (c.method == "HEAD" && body != "") {
				t.Errorf("body %.200q lacks %q", body, c.bodyHas)
			}
		})
	}
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	var r io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRevalidate: a cached file is confirmed with 304 and no body.
func TestRevalidate(t *testing.T) {
	h := MustNew()
	for _, path := range []string{"/console/", h.AssetBase() + "js/api.js"} {
		first := get(t, h, "GET", path, nil)
		etag := first.Header.Get("ETag")
		if etag == "" {
			t.Fatalf("%s: no ETag", path)
		}
		again := get(t, h, "GET", path, map[string]string{"If-None-Match": `W/"x", ` + etag})
		if b := readBody(t, again); again.StatusCode != http.StatusNotModified || b != "" {
			t.Errorf("%s: revalidation answered %d with %d bytes", path, again.StatusCode, len(b))
		}
	}
}

// TestBundle: the files hold no inline script or style, load nothing from another origin, import
// only files that exist, and stay small.
func TestBundle(t *testing.T) {
	h := MustNew()
	sub, _ := fs.Sub(static, "static")
	total := 0
	for name, size := range h.Files() {
		total += size
		b, err := fs.ReadFile(sub, name)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		switch {
		case strings.HasSuffix(name, ".html"):
			for _, bad := range []*regexp.Regexp{regexp.MustCompile(`<script(?:[^>](?:[^s]|s[^r]|sr[^c]))*>`), regexp.MustCompile(`<style`),
				regexp.MustCompile(`\sstyle=`), regexp.MustCompile(`\son[a-z]+=`), regexp.MustCompile(`(?:src|href)="(?:https?:)?//`)} {
				if m := bad.FindString(src); m != "" {
					t.Errorf("%s: %q (inline code or another origin)", name, m)
				}
			}
			for _, ref := range regexp.MustCompile(`\{\{base\}\}([\w./-]+)`).FindAllStringSubmatch(src, -1) {
				if _, err := fs.Stat(sub, ref[1]); err != nil {
					t.Errorf("%s links %s, which does not exist", name, ref[1])
				}
			}
		case strings.HasSuffix(name, ".js"):
			for _, bad := range []string{"innerHTML", "outerHTML", "eval(", "new Function", "document.write", "localStorage", "document.cookie", ".style."} {
				if strings.Contains(src, bad) {
					t.Errorf("%s uses %s", name, bad)
				}
			}
			for _, imp := range regexp.MustCompile(`(?:from|import\()\s*'([^']+)'`).FindAllStringSubmatch(src, -1) {
				if !strings.HasPrefix(imp[1], "./") {
					t.Errorf("%s imports %s: only the console's own modules", name, imp[1])
				} else if _, err := fs.Stat(sub, "js/"+strings.TrimPrefix(imp[1], "./")); err != nil {
					t.Errorf("%s imports %s, which does not exist", name, imp[1])
				}
			}
		}
	}
	t.Logf("console bundle: %d files, %d bytes as sent", len(h.Files()), total)
	if total > 200<<10 {
		t.Errorf("the console is %d bytes as sent; the budget is 200 KB", total)
	}
}

func TestWantsPage(t *testing.T) {
	cases := []struct {
		method, path, accept string
		want                 bool
	}{
		{"GET", "/", "text/html,application/xhtml+xml,*/*;q=0.8", true},
		{"HEAD", "/", "text/html", true},
		{"GET", "/", "application/json", false},
		{"GET", "/", "*/*", false}, // curl
		{"GET", "/", "", false},
		{"POST", "/", "text/html", false},
		{"GET", "/builds", "text/html", false},
	}
	for _, c := range cases {
		req := httptest.NewRequest(c.method, c.path, nil)
		req.Header.Set("Accept", c.accept)
		if got := WantsPage(req); got != c.want {
			t.Errorf("%s %s Accept %q: %v, want %v", c.method, c.path, c.accept, got, c.want)
		}
	}
}

// TestPageBase: the page names its files under the versioned prefix, which changes with them.
func TestPageBase(t *testing.T) {
	h := MustNew()
	if !regexp.MustCompile(`^/console/v/[0-9a-f]{16}/$`).MatchString(h.AssetBase()) {
		t.Fatalf("asset base %q", h.AssetBase())
	}
	if bytes.Contains(h.page.body, []byte("{{base}}")) {
		t.Fatal("the page still holds {{base}}")
	}
}
