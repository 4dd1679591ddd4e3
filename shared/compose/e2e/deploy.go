package e2e

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/serve"
)

// receiver is a customer endpoint on loopback that records what it receives.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	requests []received
	answer   func(n int) int // status for the n-th request (1-based)
	Block    chan struct{}   // when set, the first request waits for it
}

type received struct {
	Auth, ContentType string
	Length            int64
	Chunked           bool
	Parts             []string
	Metadata          map[string]string
	Filename          string
	ArtifactMD5       string
}

func NewReceiver(t *testing.T, answer func(n int) int) *receiver {
	rc := &receiver{answer: answer}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		n := len(rc.requests) + 1
		block := rc.Block
		rc.mu.Unlock()
		if n == 1 && block != nil {
			<-block
		}
		got := received{Auth: r.Header.Get("Authorization"), ContentType: r.Header.Get("Content-Type"),
			Length: r.ContentLength, Chunked: len(r.TransferEncoding) > 0}
		_, params, _ := mime.ParseMediaType(got.ContentType)
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			got.Parts = append(got.Parts, p.FormName()+":"+p.Header.Get("Content-Type"))
			switch p.FormName() {
			case "metadata":
				json.NewDecoder(p).Decode(&got.Metadata)
			case "artifact":
				got.Filename = p.FileName()
				h := md5.New()
				io.Copy(h, p)
				got.ArtifactMD5 = hex.EncodeToString(h.Sum(nil))
			}
		}
		rc.mu.Lock()
		rc.requests = append(rc.requests, got)
		rc.mu.Unlock()
		w.WriteHeader(rc.answer(n))
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) Got() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.requests...)
}

func LoopbackAllowed(c *serve.Config) {
	c.OutboundAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	c.DeliveryAttempts = 3
	c.DeliveryBackoff = 20 * time.Millisecond
}

func (w *World) WaitDeploy(t *testing.T, id string) map[string]any {
	t.Helper()
	return w.WaitBuild(t, id, "delivered", func(b map[string]any) bool {
		s := b["autoDeployStatus"]
		return s == "succeeded" || s == "failed"
	})
}

// deliveredBuild is a world whose receiver answers 204, and the complete build of a setting
// with auto deploy, delivered to it once.
func DeliveredBuild(t *testing.T) (w *World, rc *receiver, id string) {
	t.Helper()
	w = NewWorld(t, Serve, LoopbackAllowed)
	rc = NewReceiver(t, func(int) int { return http.StatusNoContent })
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, map[string]any{"autoDeploy": true, "uploadBuildUrl": rc.URL + "/upload"})["id"].(string)
	id = w.Trigger(t, pid, sid, "")
	if b := w.WaitDeploy(t, id); b["autoDeployStatus"] != "succeeded" {
		t.Fatalf("first delivery: %v", b)
	}
	return w, rc, id
}
