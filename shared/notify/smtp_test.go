package notify

import (
	"context"
	"crypto/tls"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/tcptest"
)

const password = "s3cr3t-pa55"

func newSMTP(t *testing.T, rawURL string, ts *testServer) *SMTP {
	t.Helper()
	s, err := NewSMTP(rawURL, "Kiln Builds <builds@kiln.example>")
	if err != nil {
		t.Fatal(err)
	}
	s.Timeout = 5 * time.Second
	if ts != nil && ts.CertPool != nil {
		s.TLSConfig = &tls.Config{RootCAs: ts.CertPool}
	}
	return s
}

var sample = Message{
	To:      "dev@example.com",
	Subject: "[kiln] Shooter · Linux Shipping · complete",
	Text:    "Build complete: Shooter · Linux Shipping\n\nStatus:      complete\n.\nBuild ID:    bld_42\n",
}

// parse reads a received message as a mail client would: headers decoded, body undone from its
// transfer encoding, line breaks back to LF.
func parse(t *testing.T, data []byte) (mail.Header, string) {
	t.Helper()
	msg, err := mail.ReadMessage(strings.NewReader(string(data)))
	if err != nil {
		t.Fatalf("read message: %v\n%s", err, data)
	}
	var body io.Reader = msg.Body
	if msg.Header.Get("Content-Transfer-Encoding") == "quoted-printable" {
		body = quotedprintable.NewReader(body)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return msg.Header, strings.ReplaceAll(string(b), "\r\n", "\n")
}

func onlyMessage(t *testing.T, ts *testServer) received {
	t.Helper()
	ms := ts.Messages()
	if len(ms) != 1 {
		t.Fatalf("server got %d messages, want 1", len(ms))
	}
	return ms[0]
}

func TestSMTPSendPlainLocalhostWithAuth(t *testing.T) {
	ts := startServer(t, serverOptions{users: map[string]string{"kiln": password}})
	s := newSMTP(t, "smtp://kiln:"+password+"@"+ts.Addr, ts)
	if err := s.Send(context.Background(), sample); err != nil {
		t.Fatal(err)
	}
	got := onlyMessage(t, ts)
	if got.From != "builds@kiln.example" || len(got.To) != 1 || got.To[0] != "dev@example.com" {
		t.Errorf("envelope from %q to %q", got.From, got.To)
	}
	if got.User != "kiln" || got.Password != password || got.TLS {
		t.Errorf("auth %q/%q tls=%v, want kiln/%s over plain localhost", got.User, got.Password, got.TLS, password)
	}

	h, body := parse(t, got.Data)
	subject, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
	if err != nil || subject != sample.Subject {
		t.Errorf("Subject %q (%v), raw %q", subject, err, h.Get("Subject"))
	}
	if from, err := h.AddressList("From"); err != nil || len(from) != 1 || from[0].Name != "Kiln Builds" || from[0].Address != "builds@kiln.example" {
		t.Errorf("From %q: %v %v", h.Get("From"), from, err)
	}
	if to, err := h.AddressList("To"); err != nil || len(to) != 1 || to[0].Address != "dev@example.com" {
		t.Errorf("To %q: %v", h.Get("To"), err)
	}
	if d, err := h.Date(); err != nil || time.Since(d).Abs() > time.Minute {
		t.Errorf("Date %q: %v", h.Get("Date"), err)
	}
	if id := h.Get("Message-ID"); !regexp.MustCompile(`^<[0-9a-f]{32}@kiln\.example>$`).MatchString(id) {
		t.Errorf("Message-ID %q", id)
	}
	for k, want := range map[string]string{
		"MIME-Version":              "1.0",
		"Content-Type":              "text/plain; charset=utf-8",
		"Content-Transfer-Encoding": "quoted-printable",
		"Auto-Submitted":            "auto-generated",
	} {
		if h.Get(k) != want {
			t.Errorf("%s = %q, want %q", k, h.Get(k), want)
		}
	}
	if body != sample.Text {
		t.Errorf("body\n%q\nwant\n%q", body, sample.Text)
	}
	if !strings.Contains(string(got.Data), "\r\n") || strings.Contains(strings.ReplaceAll(string(got.Data), "\r\n", ""), "\n") {
		t.Error("message has bare LF line breaks")
	}
}

func TestSMTPBodyEncoding(t *testing.T) {
	longURL := "https://artifacts.example.com/a.tar.gz?X-Amz-Security-Token=" + strings.Repeat("A", 1500)
	for _, tt := range []struct {
		name, text, cte string
	}{
		{"ascii stays 7bit", "Status: complete\nBuild ID: bld_1\n", "7bit"},
		{"non-ascii is quoted-printable", "Commit: é ✓ 日本\n", "quoted-printable"},
		{"long line is quoted-printable", "Download: " + longURL + "\n", "quoted-printable"},
		{"CRLF and missing final newline", "a\r\nb\rc", "7bit"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServer(t, serverOptions{})
			s := newSMTP(t, "smtp://"+ts.Addr, ts)
			m := sample
			m.Text = tt.text
			if err := s.Send(context.Background(), m); err != nil {
				t.Fatal(err)
			}
			got := onlyMessage(t, ts)
			for line := range strings.SplitSeq(string(got.Data), "\r\n") {
				if len(line) > 998 {
					t.Errorf("line of %d octets", len(line))
				}
			}
			h, body := parse(t, got.Data)
			if h.Get("Content-Transfer-Encoding") != tt.cte {
				t.Errorf("Content-Transfer-Encoding %q, want %q", h.Get("Content-Transfer-Encoding"), tt.cte)
			}
			want := strings.ReplaceAll(strings.ReplaceAll(tt.text, "\r\n", "\n"), "\r", "\n")
			if !strings.HasSuffix(want, "\n") {
				want += "\n"
			}
			if body != want {
				t.Errorf("body %q, want %q", body, want)
			}
		})
	}
}

func TestSMTPLongSubjectIsFolded(t *testing.T) {
	ts := startServer(t, serverOptions{})
	s := newSMTP(t, "smtp://"+ts.Addr, ts)
	m := sample
	m.Subject = "[kiln] " + strings.Repeat("Ünreal Shooter ", 12) + "· Linux Shipping · failed"
	if err := s.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	got := onlyMessage(t, ts)
	head, _, _ := strings.Cut(string(got.Data), "\r\n\r\n")
	for line := range strings.SplitSeq(head, "\r\n") {
		if len(line) > 78 {
			t.Errorf("header line of %d characters: %q", len(line), line)
		}
	}
	h, _ := parse(t, got.Data)
	if subject, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject")); err != nil || subject != m.Subject {
		t.Errorf("Subject %q (%v), want %q", subject, err, m.Subject)
	}
}

func TestSMTPStartTLS(t *testing.T) {
	// 127.0.0.2 is loopback on Linux but not "localhost" to the client, so credentials need TLS.
	ts := startServer(t, serverOptions{host: "127.0.0.2", startTLS: true, users: map[string]string{"kiln": password}})
	for _, q := range []string{"", "?starttls=required"} {
		s := newSMTP(t, "smtp://kiln:"+password+"@"+ts.Addr+q, ts)
		if err := s.Send(context.Background(), sample); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, m := range ts.Messages() {
		if !m.TLS || m.User != "kiln" || m.Password != password {
			t.Errorf("tls=%v auth %q/%q", m.TLS, m.User, m.Password)
		}
	}
	if n := len(ts.Messages()); n != 2 {
		t.Errorf("%d messages, want 2", n)
	}

	// An untrusted certificate fails the send.
	s := newSMTP(t, "smtp://kiln:"+password+"@"+ts.Addr, nil)
	if err := s.Send(context.Background(), sample); err == nil || !strings.Contains(err.Error(), "starttls") {
		t.Errorf("untrusted certificate: %v", err)
	}
}

func TestSMTPImplicitTLS(t *testing.T) {
	ts := startServer(t, serverOptions{host: "127.0.0.2", implicitTLS: true, users: map[string]string{"kiln": password}})
	s := newSMTP(t, "smtps://kiln:"+password+"@"+ts.Addr, ts)
	if err := s.Send(context.Background(), sample); err != nil {
		t.Fatal(err)
	}
	if got := onlyMessage(t, ts); !got.TLS || got.User != "kiln" || got.Password != password {
		t.Errorf("tls=%v auth %q/%q", got.TLS, got.User, got.Password)
	}
}

func TestSMTPRefusals(t *testing.T) {
	plainRemote := startServer(t, serverOptions{host: "127.0.0.2", users: map[string]string{"kiln": password}})
	plainLocal := startServer(t, serverOptions{users: map[string]string{"kiln": password}})
	rejecting := startServer(t, serverOptions{rejectRcpt: true})
	for _, tt := range []struct {
		name    string
		ts      *testServer
		url     string
		msg     Message
		wantErr string
	}{
		{"credentials over plain to a non-local host", plainRemote, "smtp://kiln:" + password + "@" + plainRemote.Addr, sample, "unencrypted"},
		{"starttls required but not offered", plainLocal, "smtp://" + plainLocal.Addr + "?starttls=required", sample, "STARTTLS"},
		{"wrong password", plainLocal, "smtp://kiln:wrong-" + password + "@" + plainLocal.Addr, sample, "auth"},
		{"recipient rejected", rejecting, "smtp://" + rejecting.Addr, sample, "550"},
		{"CRLF in To", plainLocal, "smtp://" + plainLocal.Addr, Message{To: "dev@example.com\r\nBcc: x@evil.example", Subject: "s", Text: "t"}, "CR or LF"},
		{"LF in Subject", plainLocal, "smtp://" + plainLocal.Addr, Message{To: "dev@example.com", Subject: "s\nBcc: x@evil.example", Text: "t"}, "CR or LF"},
		{"display name in To", plainLocal, "smtp://" + plainLocal.Addr, Message{To: "Dev <dev@example.com>", Subject: "s", Text: "t"}, "plain"},
		{"two recipients", plainLocal, "smtp://" + plainLocal.Addr, Message{To: "a@example.com, b@example.com", Subject: "s", Text: "t"}, "plain"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := len(tt.ts.Messages())
			err := newSMTP(t, tt.url, tt.ts).Send(context.Background(), tt.msg)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), password) {
				t.Errorf("error shows the password: %v", err)
			}
			if after := len(tt.ts.Messages()); after != before {
				t.Errorf("server accepted a message")
			}
		})
	}
	if n := len(plainRemote.Logins()); n != 0 {
		t.Errorf("credentials reached a server over plain text %d times", n)
	}
}

func TestSMTPUnreachableFailsQuickly(t *testing.T) {
	s := newSMTP(t, "smtp://"+tcptest.ClosedAddr(t), nil)
	start := time.Now()
	if err := s.Send(context.Background(), sample); err == nil || !strings.Contains(err.Error(), "connect") {
		t.Errorf("err = %v, want a connect error", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestSMTPSilentServerTimesOut(t *testing.T) {
	addr := tcptest.Serve(t, nil) // accepts connections and never greets
	for _, tt := range []struct {
		name    string
		timeout time.Duration
		ctx     func() (context.Context, context.CancelFunc)
	}{
		{"timeout", 200 * time.Millisecond, func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }},
		{"context deadline", time.Minute, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 200*time.Millisecond)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSMTP(t, "smtp://"+addr, nil)
			s.Timeout = tt.timeout
			ctx, cancel := tt.ctx()
			defer cancel()
			start := time.Now()
			if err := s.Send(ctx, sample); err == nil {
				t.Fatal("no error")
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}
