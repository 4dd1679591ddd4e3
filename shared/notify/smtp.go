package notify

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/smtp"
	"net/url"
	"strings"
	"time"
)

// Sender delivers messages. Send returns once the server has accepted the message.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

var _ Sender = (*SMTP)(nil)

// DefaultTimeout bounds one SMTP send (connect, TLS, auth and transfer) when SMTP.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// SMTP sends messages to an SMTP server (net/smtp), one connection per message.
type SMTP struct {
	// TLSConfig is used for implicit TLS and STARTTLS; nil verifies the server against the system
	// roots. ServerName defaults to the URL's host.
	TLSConfig *tls.Config
	// Timeout bounds one Send; NewSMTP sets it from the URL's ?timeout=, and zero means DefaultTimeout.
	Timeout time.Duration
	// LocalName is the name sent with EHLO; empty means "localhost".
	LocalName string

	host, port  string
	implicitTLS bool // smtps://
	requireTLS  bool // smtp://…?starttls=required
	user, pass  string
	from        mail.Address
	redacted    string
	now         func() time.Time
}

// NewSMTP reads the server from a URL and the From address (an address, optionally with a display
// name: "Kiln <builds@example.com>").
//
//	smtp://user:pass@host:587                     STARTTLS when the server offers it
//	smtp://user:pass@host:587?starttls=required   fail unless STARTTLS succeeds
//	smtps://user:pass@host:465                    implicit TLS
//	…&timeout=10s                                 bound on one send (default 30s)
//
// The port defaults to 587 for smtp and 465 for smtps. Credentials are sent with AUTH PLAIN, only
// over TLS or to a server on localhost. The password appears in no error and no String.
func NewSMTP(rawURL string, from string) (*SMTP, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error quotes the whole URL, password included: say only what is wrong.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("notify: invalid SMTP URL: %v", err)
	}
	s := &SMTP{host: u.Hostname(), port: u.Port(), redacted: u.Redacted(), now: time.Now}
	switch u.Scheme {
	case "smtp":
		if s.port == "" {
			s.port = "587"
		}
	case "smtps":
		s.implicitTLS = true
		if s.port == "" {
			s.port = "465"
		}
	default:
		return nil, fmt.Errorf("notify: SMTP URL %s: scheme must be smtp or smtps", s.redacted)
	}
	if s.host == "" || (u.Path != "" && u.Path != "/") || u.Opaque != "" {
		return nil, fmt.Errorf("notify: SMTP URL %s: want scheme://[user:pass@]host[:port]", s.redacted)
	}
	if u.User != nil {
		s.user = u.User.Username()
		s.pass, _ = u.User.Password()
		if s.user == "" {
			return nil, fmt.Errorf("notify: SMTP URL %s: empty user name", s.redacted)
		}
	}
	for key, values := range u.Query() {
		v := values[len(values)-1]
		switch key {
		case "starttls":
			if v != "required" || s.implicitTLS {
				return nil, fmt.Errorf("notify: SMTP URL %s: starttls=required is the only value, and only for smtp://", s.redacted)
			}
			s.requireTLS = true
		case "timeout":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("notify: SMTP URL %s: timeout must be a positive duration such as 10s", s.redacted)
			}
			s.Timeout = d
		default:
			return nil, fmt.Errorf("notify: SMTP URL %s: unknown parameter %q", s.redacted, key)
		}
	}
	a, err := mail.ParseAddress(from)
	if err != nil || !isASCII(a.Address) {
		return nil, fmt.Errorf("notify: from address %q: must be an ASCII email address, optionally with a name", from)
	}
	s.from = *a
	return s, nil
}

// String is the server URL with the password masked.
func (s *SMTP) String() string { return s.redacted }

// Send delivers m over a new connection and waits for the server to accept it. It gives up when
// ctx ends or the timeout passes, whichever comes first.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	data, err := compose(m, s.from, s.now())
	if err != nil {
		return fmt.Errorf("notify: %w", err)
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	addr := net.JoinHostPort(s.host, s.port)
	conn, err := s.dial(ctx, addr)
	if err != nil {
		return fmt.Errorf("notify: connect to %s: %w", addr, err)
	}
	// Every read and write fails once ctx ends, so a silent server cannot hold Send.
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	if err := s.deliver(conn, m.To, data); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", err, context.Cause(ctx))
		}
		return fmt.Errorf("notify: send via %s: %w", addr, err)
	}
	return nil
}

func (s *SMTP) dial(ctx context.Context, addr string) (net.Conn, error) {
	d := &net.Dialer{}
	if !s.implicitTLS {
		return d.DialContext(ctx, "tcp", addr)
	}
	return (&tls.Dialer{NetDialer: d, Config: s.tlsConfig()}).DialContext(ctx, "tcp", addr)
}

func (s *SMTP) tlsConfig() *tls.Config {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.TLSConfig != nil {
		c = s.TLSConfig.Clone()
	}
	if c.ServerName == "" {
		c.ServerName = s.host
	}
	return c
}

// deliver speaks SMTP over conn, which it closes.
func (s *SMTP) deliver(conn net.Conn, to string, data []byte) error {
	c, err := smtp.NewClient(conn, s.host)
	if err != nil {
		conn.Close()
		return err
	}
	defer c.Close()
	local := s.LocalName
	if local == "" {
		local = "localhost"
	}
	if err := c.Hello(local); err != nil {
		return err
	}
	if !s.implicitTLS {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(s.tlsConfig()); err != nil {
				return fmt.Errorf("starttls: %w", err)
			}
		} else if s.requireTLS {
			return errors.New("server does not offer STARTTLS, which the URL requires")
		}
	}
	if s.user != "" {
		if _, isTLS := c.TLSConnectionState(); !isTLS && !isLocalhost(s.host) {
			return errors.New("refusing to send credentials over an unencrypted connection")
		}
		if ok, _ := c.Extension("AUTH"); !ok {
			return errors.New("server does not offer AUTH")
		}
		if err := c.Auth(smtp.PlainAuth("", s.user, s.pass, s.host)); err != nil {
			return fmt.Errorf("auth as %s: %w", s.user, err)
		}
	}
	if err := c.Mail(s.from.Address); err != nil {
		return fmt.Errorf("mail from: %w", err)
	}
	if err := c.Rcpt(to); err != nil {
		return fmt.Errorf("rcpt to: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("data: %w", err)
	}
	if _, err := w.Write(data); err != nil {
		return fmt.Errorf("data: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("data: %w", err)
	}
	// The server has accepted the message; a failed QUIT does not undo that.
	_ = c.Quit()
	return nil
}

// isLocalhost matches net/smtp's rule for sending PLAIN credentials without TLS.
func isLocalhost(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

func isASCII(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r > 0x7f })
}
