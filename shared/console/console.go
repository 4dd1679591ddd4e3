// Package console is kiln's web console: plain HTML, CSS and a few ES modules embedded in the
// binary and served under /console/. It talks to the public API only, with the API token the
// user pastes once (kept in the tab's sessionStorage).
//
// Every file is served under a versioned prefix, /console/v/<hash of all files>/, so it can be
// cached as immutable; the page itself (index.html, for /console/ and every console route such
// as /console/builds/<id>) is revalidated with its ETag each time.
package console

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"sort"
	"strings"
)

//go:embed static
var static embed.FS

// Prefix is where the console is served.
const Prefix = "/console/"

// CSP is the Content-Security-Policy of every console response: nothing but kiln's own origin,
// no inline script or style, no framing.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// file is one prepared response body.
type file struct {
	body        []byte
	gzipped     []byte // nil when gzip does not make it smaller
	etag        string
	contentType string
}

// Handler serves the console.
type Handler struct {
	version string           // the hash in /console/v/<version>/
	assets  map[string]*file // by path below static/
	page    *file            // index.html with the versioned prefix filled in
}

// New prepares the console's files (hashes, gzip) once.
func New() (*Handler, error) {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	raw := map[string][]byte{}
	var names []string
	err = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		raw[p] = b
		names = append(names, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("console: read files: %w", err)
	}
	sort.Strings(names)
	all := sha256.New()
	for _, n := range names {
		fmt.Fprintf(all, "%s\x00%d\x00", n, len(raw[n]))
		all.Write(raw[n])
	}
	h := &Handler{version: hex.EncodeToString(all.Sum(nil))[:16], assets: map[string]*file{}}
	for _, n := range names {
		if n == "index.html" {
			continue
		}
		h.assets[n] = prepare(n, raw[n])
	}
	index, ok := raw["index.html"]
	if !ok {
		return nil, fmt.Errorf("console: no index.html")
	}
	h.page = prepare("index.html", bytes.ReplaceAll(index, []byte("{{base}}"), []byte(h.AssetBase())))
	return h, nil
}

// MustNew is New for the files embedded at build time, which cannot change after the tests of
// this package passed: a failure is a broken build, not a runtime condition.
func MustNew() *Handler {
	h, err := New()
	if err != nil {
		panic(err)
	}
	return h
}

// AssetBase is the versioned prefix the console's files are served under.
func (h *Handler) AssetBase() string { return Prefix + "v/" + h.version + "/" }

// Files lists the console's files with their sizes as sent (gzipped when that is smaller), for
// the bundle size report.
func (h *Handler) Files() map[string]int {
	out := map[string]int{"index.html": h.page.sentSize()}
	for n, f := range h.assets {
		out[n] = f.sentSize()
	}
	return out
}

func prepare(name string, body []byte) *file {
	sum := sha256.Sum256(body)
	f := &file{body: body, etag: `"` + hex.EncodeToString(sum[:])[:20] + `"`}
	f.contentType = mime.TypeByExtension(path.Ext(name))
	switch path.Ext(name) {
	case ".js":
		f.contentType = "text/javascript; charset=utf-8"
	case ".html":
		f.contentType = "text/html; charset=utf-8"
	case ".css":
		f.contentType = "text/css; charset=utf-8"
	}
	if f.contentType == "" {
		f.contentType = "application/octet-stream"
	}
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	_, _ = zw.Write(body)
	_ = zw.Close()
	if z.Len() < len(body) {
		f.gzipped = z.Bytes()
	}
	return f
}

func (f *file) sentSize() int {
	if f.gzipped != nil {
		return len(f.gzipped)
	}
	return len(f.body)
}

// ServeHTTP answers GET and HEAD below /console/.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", CSP)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	rest, ok := strings.CutPrefix(r.URL.Path, Prefix)
	if !ok {
		http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
		return
	}
	if asset, ok := strings.CutPrefix(rest, "v/"); ok {
		version, name, _ := strings.Cut(asset, "/")
		f := h.assets[name]
		if version != h.version || f == nil {
			// An older console's file, or none: never answer it with today's under "immutable".
			hd.Set("Cache-Control", "no-store")
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
		serve(w, r, f)
		return
	}
	// Every other path is a page of the console (its router reads the path).
	hd.Set("Cache-Control", "no-cache")
	serve(w, r, h.page)
}

func serve(w http.ResponseWriter, r *http.Request, f *file) {
	hd := w.Header()
	hd.Set("Content-Type", f.contentType)
	hd.Set("ETag", f.etag)
	hd.Add("Vary", "Accept-Encoding")
	if match := r.Header.Get("If-None-Match"); match != "" && etagMatches(match, f.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := f.body
	if f.gzipped != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		body = f.gzipped
		hd.Set("Content-Encoding", "gzip")
	}
	hd.Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

// acceptsGzip reads Accept-Encoding: gzip listed without q=0.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

// WantsPage reports whether a request for / comes from a browser (GET or HEAD accepting
// text/html), which is sent to the console; API clients get the API's answer.
func WantsPage(r *http.Request) bool {
	if r.URL.Path != "/" || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		return false
	}
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "text/html") {
			return true
		}
	}
	return false
}
