package notify

import (
	"strings"
	"testing"
	"time"
)

func TestNewSMTP(t *testing.T) {
	for _, tt := range []struct {
		url, from string
		wantErr   string
		check     func(*SMTP) bool
	}{
		{url: "smtp://mail.example.com", check: func(s *SMTP) bool { return s.port == "587" && !s.implicitTLS && !s.requireTLS }},
		{url: "smtps://u:p@mail.example.com", check: func(s *SMTP) bool { return s.port == "465" && s.implicitTLS && s.user == "u" && s.pass == "p" }},
		{url: "smtp://u:p%40ss@mail.example.com:2525?starttls=required&timeout=7s", check: func(s *SMTP) bool {
			return s.port == "2525" && s.requireTLS && s.pass == "p@ss" && s.Timeout == 7*time.Second
		}},
		{url: "http://mail.example.com", wantErr: "scheme"},
		{url: "smtp://", wantErr: "host"},
		{url: "smtp://mail.example.com/path", wantErr: "host"},
		{url: "smtp://mail.example.com?starttls=yes", wantErr: "starttls"},
		{url: "smtps://mail.example.com?starttls=required", wantErr: "starttls"},
		{url: "smtp://mail.example.com?timeout=soon", wantErr: "timeout"},
		{url: "smtp://mail.example.com?tls=1", wantErr: "unknown parameter"},
		{url: "smtp://:" + password + "@mail.example.com", wantErr: "user"},
		{url: "smtp://u:" + password + "@mail.example.com:bad", wantErr: "invalid SMTP URL"},
		{url: "smtp://u:" + password + "@mail example.com", wantErr: "invalid SMTP URL"},
		{url: "smtp://mail.example.com", from: "not an address", wantErr: "from address"},
		{url: "smtp://mail.example.com", from: "Kiln\r\nBcc: x@evil.example <b@kiln.example>", wantErr: "from address"},
	} {
		t.Run(tt.url, func(t *testing.T) {
			from := tt.from
			if from == "" {
				from = "builds@kiln.example"
			}
			s, err := NewSMTP(tt.url, from)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), password) {
					t.Errorf("error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(s) {
				t.Errorf("parsed %+v", s)
			}
			if s.pass != "" && strings.Contains(s.String(), ":"+s.pass+"@") {
				t.Errorf("String shows the password: %s", s)
			}
		})
	}
}
