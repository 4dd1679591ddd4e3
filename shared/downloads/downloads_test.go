package downloads

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestSignedURLs(t *testing.T) {
	s := Signer{Key: []byte("0123456789abcdef0123456789abcdef"), BaseURL: "https://kiln.example/"}
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	raw := s.URL("kORG", "kBUILD", now.Add(Lifetime))
	u, err := url.Parse(raw)
	if err != nil || u.Path != "/downloads/kORG/kBUILD.tar.gz" || !strings.HasPrefix(raw, "https://kiln.example/downloads/") {
		t.Fatalf("url %s", raw)
	}
	exp, sig := u.Query().Get("expires"), u.Query().Get("signature")
	tests := []struct {
		name                string
		org, build, exp, sg string
		at                  time.Time
		want                bool
	}{
		{"valid", "kORG", "kBUILD", exp, sig, now, true},
		{"at expiry", "kORG", "kBUILD", exp, sig, now.Add(Lifetime), true},
		{"expired", "kORG", "kBUILD", exp, sig, now.Add(Lifetime + time.Second), false},
		{"other build", "kORG", "kOTHER", exp, sig, now, false},
		{"other org", "kOTHER", "kBUILD", exp, sig, now, false},
		{"later expiry", "kORG", "kBUILD", "9999999999", sig, now, false},
		{"bad expiry", "kORG", "kBUILD", "soon", sig, now, false},
		{"tampered signature", "kORG", "kBUILD", exp, "x" + sig[1:], now, false},
	}
	for _, tt := range tests {
		if got := s.Valid(tt.org, tt.build, tt.exp, tt.sg, tt.at); got != tt.want {
			t.Errorf("%s: Valid = %v, want %v", tt.name, got, tt.want)
		}
	}
	other := Signer{Key: []byte("another key, another signature!!"), BaseURL: s.BaseURL}
	if other.Valid("kORG", "kBUILD", exp, sig, now) {
		t.Error("a URL signed with another key is valid")
	}
}
