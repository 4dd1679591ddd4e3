package e2e

import (
	"archive/tar"
	"compress/gzip"
	"crypto/md5"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/httpapi/openapi/openapitest"
)

// trigger triggers a setting and returns the build id.
func (w *World) Trigger(t testing.TB, projectID, settingID, body string) string {
	t.Helper()
	r := w.Do(t, "POST", "/projects/"+projectID+"/build-settings/"+settingID+"/trigger", w.Token, body)
	if r.Status != http.StatusAccepted {
		t.Fatalf("trigger: %d %s", r.Status, r.Raw)
	}
	return Field(t, r.Body, "buildId")
}

// waitBuild polls a build until cond holds (or fails the test after a minute).
func (w *World) WaitBuild(t testing.TB, id string, what string, cond func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := w.Do(t, "GET", "/builds/"+id, w.Token, nil)
		if r.Status != 200 {
			t.Fatalf("GET build: %d %s", r.Status, r.Raw)
		}
		if cond(r.Body) {
			return r.Body
		}
		if time.Now().After(deadline) {
			t.Fatalf("build %s never became %s: %s", id, what, r.Raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (w *World) WaitStatus(t testing.TB, id, status string) map[string]any {
	t.Helper()
	return w.WaitBuild(t, id, status, func(b map[string]any) bool { return b["status"] == status })
}

func (w *World) WaitEnded(t testing.TB, id string) map[string]any {
	t.Helper()
	return w.WaitBuild(t, id, "ended", func(b map[string]any) bool {
		s := b["status"]
		return s == "complete" || s == "failed" || s == "superseded"
	})
}

// fetchArtifact downloads a signed URL without a token and returns its bytes.
func FetchArtifact(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := openapitest.Client(t).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/gzip" {
		t.Fatalf("download: %d %s %.200s", resp.StatusCode, resp.Header.Get("Content-Type"), data)
	}
	return data
}

func MD5Hex(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

// tarEntries lists the names in a .tar.gz.
func TarEntries(t *testing.T, data []byte) []string {
	t.Helper()
	var names []string
	walkTar(t, data, func(h *tar.Header, _ io.Reader) { names = append(names, h.Name) })
	return names
}

// tarFiles returns the regular files of a .tar.gz and their contents.
func TarFiles(t *testing.T, data []byte) map[string]string {
	t.Helper()
	files := map[string]string{}
	walkTar(t, data, func(h *tar.Header, r io.Reader) {
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			files[h.Name] = string(b)
		}
	})
	return files
}

func walkTar(t *testing.T, data []byte, visit func(*tar.Header, io.Reader)) {
	t.Helper()
	zr, err := gzip.NewReader(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		visit(h, tr)
	}
}

// logText is the whole log of a build as text.
func (w *World) LogText(t testing.TB, id string) string {
	t.Helper()
	return w.LogTextAs(t, id, w.Token)
}

// logTextAs is a build's whole log as text, read with token (another organization's, say).
func (w *World) LogTextAs(t testing.TB, id, token string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", w.URL()+"/builds/"+id+"/logs", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := openapitest.Client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("logs: %d %s", resp.StatusCode, data)
	}
	return string(data)
}
