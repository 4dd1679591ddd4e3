package e2e

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	gosmtp "github.com/emersion/go-smtp"
)

// mailbox is a real SMTP server on loopback that keeps what it receives.
type mailbox struct {
	Addr string
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

func (s *mailSession) Reset() { s.to = nil }

func (s *mailSession) Logout() error { return nil }

func NewMailbox(t *testing.T) *mailbox {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	box := &mailbox{Addr: ln.Addr().String()}
	srv := gosmtp.NewServer(gosmtp.BackendFunc(func(c *gosmtp.Conn) (gosmtp.Session, error) { return &mailSession{box: box}, nil }))
	srv.Domain = "mx.test"
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return box
}

func (m *mailbox) Messages() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.mail...)
}
