package delivery

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/outbound"
)

// TestDeliveryFailureCauses: the log gets the precise cause, the customer a neutral error.
func TestDeliveryFailureCauses(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedURL := "http://" + closed.Addr().String() + "/upload"
	closed.Close()
	tlsSrv := httptest.NewTLSServer(answer(204))
	t.Cleanup(tlsSrv.Close)
	hang := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang }))
	t.Cleanup(func() { close(hang); slow.Close() })
	failing, _ := receiver(t, answer(500))

	noDNS := outbound.NewClient(outbound.Config{Allow: loopback})
	noDNS.Transport.(*http.Transport).DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, _ := net.SplitHostPort(addr)
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	tests := []struct {
		name, url      string
		client         *http.Client
		wantError      string
		wantCausePrefx string
		wantCauseHas   string
	}{
		{"dns", "http://receiver.invalid/upload", noDNS, "network error", "dns: ", "receiver.invalid"},
		{"refused", refusedURL, client(), "network error", "refused: ", "connection refused"},
		{"timeout", slow.URL, outbound.NewClient(outbound.Config{Allow: loopback, HeaderTimeout: 50 * time.Millisecond}), "network error", "timeout: ", ""},
		{"tls", tlsSrv.URL, client(), "network error", "tls: ", "certificate"},
		{"status", failing.URL, client(), "receiver answered 500", "status: ", "500"},
		{"not allowed", failing.URL, outbound.NewClient(outbound.Config{}), "address not allowed", "not allowed: ", "KILN_OUTBOUND_ALLOW"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var causes []string
			res := Deliver(context.Background(), tt.client, Delivery{URL: tt.url + "?token=secret", Metadata: testMeta,
				Artifact: artifact([]byte("x"), nil), OnFailure: func(cause string) { causes = append(causes, cause) }})
			if len(causes) != 1 {
				t.Fatalf("causes %q, want one per failed attempt", causes)
			}
			cause := causes[0]
			if res.Succeeded || res.Error != tt.wantError {
				t.Errorf("customer sees %q, want %q", res.Error, tt.wantError)
			}
			if !strings.HasPrefix(cause, tt.wantCausePrefx) || !strings.Contains(cause, tt.wantCauseHas) {
				t.Errorf("cause %q, want %q…%q", cause, tt.wantCausePrefx, tt.wantCauseHas)
			}
			if strings.Contains(cause, "secret") {
				t.Errorf("cause %q carries the URL's query", cause)
			}
		})
	}
}
