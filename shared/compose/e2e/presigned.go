package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/httpapi/openapi/openapitest"
)

// PresignedDownload is a build's artifact fetched from object storage: its download descriptor,
// the presigned URL the descriptor's signed URL redirected to, and what that URL answered.
type PresignedDownload struct {
	Descriptor Response
	Location   string      // the presigned GET
	Header     http.Header // its answer's
	Data       []byte      // the artifact
}

// DownloadPresigned asks for build id's download descriptor, follows its signed URL to a 302
// whose Location starts with locationPrefix, fetches that presigned GET and checks that it
// answers 200 with an artifact of the descriptor's size and MD5.
func (ts *Server) DownloadPresigned(t *testing.T, id, locationPrefix string) PresignedDownload {
	t.Helper()
	d := ts.Do(t, "GET", "/builds/"+id+"/download", ts.Token, nil)
	if d.Status != 200 {
		t.Fatalf("download descriptor: %d %s", d.Status, d.Raw)
	}
	client := openapitest.Client(t)
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Get(Field(t, d.Body, "url"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	location := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(location, locationPrefix) {
		t.Fatalf("signed URL: %d, Location %q; want 302 to a presigned GET under %s", resp.StatusCode, location, locationPrefix)
	}
	resp, err = http.Get(location)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || int64(len(data)) != int64(d.Body["sizeBytes"].(float64)) || MD5Hex(data) != Field(t, d.Body, "checksumMd5") {
		t.Fatalf("presigned GET: %d, %d bytes, md5 %s; descriptor %s", resp.StatusCode, len(data), MD5Hex(data), d.Raw)
	}
	return PresignedDownload{Descriptor: d, Location: location, Header: resp.Header, Data: data}
}
