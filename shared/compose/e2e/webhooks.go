package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// hookReceiver records webhook deliveries and checks their signatures with the secret.
type hookReceiver struct {
	*httptest.Server
	Mu     sync.Mutex
	Secret string
	got    []map[string]any
	Bad    int
	Fail   int // answer 500 to this many requests first
}

func NewHookReceiver(t *testing.T) *hookReceiver {
	hr := &hookReceiver{}
	hr.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		hr.Mu.Lock()
		defer hr.Mu.Unlock()
		if hr.Fail > 0 {
			hr.Fail--
			w.WriteHeader(500)
			return
		}
		m := hmac.New(sha256.New, []byte(hr.Secret))
		m.Write(body)
		if r.Header.Get("X-Kiln-Signature") != "sha256="+hex.EncodeToString(m.Sum(nil)) || r.Header.Get("Content-Type") != "application/json" {
			hr.Bad++
			w.WriteHeader(400)
			return
		}
		var ev map[string]any
		json.Unmarshal(body, &ev)
		ev["_event"], ev["_delivery"] = r.Header.Get("X-Kiln-Event"), r.Header.Get("X-Kiln-Delivery")
		hr.got = append(hr.got, ev)
		w.WriteHeader(204)
	}))
	t.Cleanup(hr.Close)
	return hr
}

func (hr *hookReceiver) Events() []map[string]any {
	hr.Mu.Lock()
	defer hr.Mu.Unlock()
	return append([]map[string]any(nil), hr.got...)
}
