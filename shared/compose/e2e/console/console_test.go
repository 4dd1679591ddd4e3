package console

import (
	"compress/gzip"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/console"
)

// TestConsoleServed: kiln serve and the AWS API function (on kiln aws-local: API Gateway's
// event through the Lambda adapter) serve the console with its security headers, send browsers
// at / there, and leave API clients' answers as they were.
func TestConsoleServed(t *testing.T) {
	t.Parallel()
	for _, where := range []string{"serve", "aws-local"} {
		t.Run(where, func(t *testing.T) {
			ts := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, filepath.Join(t.TempDir(), "data")))
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			send := func(method, path string, header map[string]string) (*http.Response, string) {
				t.Helper()
				req, _ := http.NewRequest(method, ts.URL()+path, nil)
				for k, v := range header {
					req.Header.Set(k, v)
				}
				req.Header.Set("Accept-Encoding", header["Accept-Encoding"]) // no transparent gunzip
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				var r io.Reader = resp.Body
				if resp.Header.Get("Content-Encoding") == "gzip" {
					if r, err = gzip.NewReader(resp.Body); err != nil {
						t.Fatalf("%s %s: gzip: %v", method, path, err)
					}
				}
				b, err := io.ReadAll(r)
				if err != nil {
					t.Fatalf("%s %s: %v", method, path, err)
				}
				return resp, string(b)
			}

			// A browser at / goes to the console; an API client gets the API's 404.
			resp, _ := send("GET", "/", map[string]string{"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
			if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/console/" {
				t.Fatalf("browser at /: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
			}
			for _, accept := range []string{"application/json", "*/*"} {
				resp, body := send("GET", "/", map[string]string{"Accept": accept})
				if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, `"error":"not_found"`) {
					t.Fatalf("API client (Accept %s) at /: %d %s", accept, resp.StatusCode, body)
				}
			}
			if resp, _ := send("POST", "/", map[string]string{"Accept": "text/html"}); resp.StatusCode != http.StatusNotFound {
				t.Fatalf("POST / answered %d", resp.StatusCode)
			}

			// The page, for any console route, with the headers; then a module, gzipped.
			resp, page := send("GET", "/console/builds/b1", map[string]string{"Accept": "text/html"})
			if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") != console.CSP ||
				resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Referrer-Policy") != "no-referrer" {
				t.Fatalf("console page: %d %v", resp.StatusCode, resp.Header)
			}
			module := regexp.MustCompile(`src="(/console/v/[0-9a-f]+/js/app\.js)"`).FindStringSubmatch(page)
			if module == nil {
				t.Fatalf("no module in the page:\n%s", page)
			}
			resp, js := send("GET", module[1], map[string]string{"Accept-Encoding": "gzip"})
			if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(js, "import ") ||
				!strings.Contains(resp.Header.Get("Cache-Control"), "immutable") {
				t.Fatalf("module: %d %v\n%.200s", resp.StatusCode, resp.Header, js)
			}
			if resp, _ := send("POST", "/console/", nil); resp.StatusCode != http.StatusMethodNotAllowed {
				t.Fatalf("POST /console/ answered %d", resp.StatusCode)
			}
			if resp, _ := send("GET", "/console", nil); resp.StatusCode/100 != 3 || resp.Header.Get("Location") != "/console/" {
				t.Fatalf("GET /console: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
			}
		})
	}
}
