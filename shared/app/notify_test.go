package app

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"
)

// mailbox is a real SMTP server on loopback that keeps what it receives.
type mailbox struct {
	addr string
	mu   sync.Mutex
	mail []string // "to\ndata"
}

type mailSession struct {
	box *mailbox
	to  []string
}

func (s *mailSession) Mail(from string, opts *gosmtp.MailOptions) error { return nil }
func (s *mailSession) Rcpt(to string, opts *gosmtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}
func (s *mailSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	s.box.mu.Lock()
	s.box.mail = append(s.box.mail, strings.Join(s.to, ",")+"\n"+string(data))
	s.box.mu.Unlock()
	return err
}
func (s *mailSession) Reset()        { s.to = nil }
func (s *mailSession) Logout() error { return nil }

func newMailbox(t *testing.T) *mailbox {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	box := &mailbox{addr: ln.Addr().String()}
	srv := gosmtp.NewServer(gosmtp.BackendFunc(func(c *gosmtp.Conn) (gosmtp.Session, error) { return &mailSession{box: box}, nil }))
	srv.Domain = "mx.test"
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return box
}

func (m *mailbox) messages() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.mail...)
}

func TestNotifyOnCompleteEmailsWhoTriggered(t *testing.T) {
	box := newMailbox(t)
	w := newWorld(t, func(c *Config) { c.SMTPURL = "smtp://" + box.addr; c.SMTPFrom = "kiln <kiln@studio.example>" })
	pid := w.addShooter(t)
	notified := w.addSetting(t, pid, map[string]any{"notifyOnComplete": true})["id"].(string)
	quiet := w.addSetting(t, pid, map[string]any{"branch": "dev"})["id"].(string)
	w.shooter.Commit("broken", "Break the cook", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_FAIL=cook\n"})
	failing := w.addSetting(t, pid, map[string]any{"notifyOnComplete": true, "branch": "broken"})["id"].(string)

	ok := w.trigger(t, pid, notified, "")
	w.waitEnded(t, w.trigger(t, pid, quiet, ""))
	bad := w.trigger(t, pid, failing, "")
	w.waitEnded(t, ok)
	w.waitEnded(t, bad)
	deadline := time.Now().Add(10 * time.Second)
	for len(box.messages()) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	mail := box.messages()
	if len(mail) != 2 {
		t.Fatalf("got %d emails, want 2 (complete and failed, none for the quiet setting): %q", len(mail), mail)
	}
	var complete, failed string
	for _, m := range mail {
		if strings.Contains(m, ok) {
			complete = m
		}
		if strings.Contains(m, bad) {
			failed = m
		}
	}
	if !strings.HasPrefix(complete, "owner@kiln.local\n") || !strings.Contains(complete, "complete") ||
		!strings.Contains(complete, w.URL()+"/downloads/") || !strings.Contains(complete, "Shooter") {
		t.Errorf("completion email:\n%s", complete)
	}
	if !strings.Contains(failed, "failed") || !strings.Contains(failed, "RunUAT exited") || strings.Contains(failed, "/downloads/") {
		t.Errorf("failure email:\n%s", failed)
	}
}
