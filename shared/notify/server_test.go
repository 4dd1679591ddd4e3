package notify

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"
)

// received is one message the test server accepted, or one login it saw.
type received struct {
	From     string
	To       []string
	Data     []byte
	TLS      bool // the message came over TLS (STARTTLS or implicit)
	User     string
	Password string
}

// testServer is a real SMTP server (emersion/go-smtp) on a loopback port that records what it gets.
type testServer struct {
	Addr       string
	Host, Port string
	CertPool   *x509.CertPool

	mu       sync.Mutex
	messages []received
	logins   []received // every AUTH PLAIN attempt, in order
}

type serverOptions struct {
	host        string // listen address; default 127.0.0.1
	startTLS    bool   // offer STARTTLS
	implicitTLS bool   // smtps
	users       map[string]string
	rejectRcpt  bool
}

func startServer(t *testing.T, o serverOptions) *testServer {
	t.Helper()
	if o.host == "" {
		o.host = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(o.host, "0"))
	if err != nil {
		t.Skipf("cannot listen on %s: %v", o.host, err)
	}
	ts := &testServer{Addr: ln.Addr().String()}
	ts.Host, ts.Port, _ = net.SplitHostPort(ts.Addr)

	srv := gosmtp.NewServer(gosmtp.BackendFunc(func(c *gosmtp.Conn) (gosmtp.Session, error) {
		return &session{ts: ts, o: o, conn: c}, nil
	}))
	srv.Domain = "mx.test"
	srv.AllowInsecureAuth = true // so the client's own refusal is what the tests see
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.ErrorLog = testLogger{t}
	if o.startTLS || o.implicitTLS {
		cert, pool := selfSigned(t, o.host)
		ts.CertPool = pool
		cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
		if o.startTLS {
			srv.TLSConfig = cfg
		} else {
			ln = tls.NewListener(ln, cfg)
		}
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ts
}

func (ts *testServer) Messages() []received {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]received(nil), ts.messages...)
}

func (ts *testServer) Logins() []received {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]received(nil), ts.logins...)
}

type session struct {
	ts   *testServer
	o    serverOptions
	conn *gosmtp.Conn
	cur  received
}

var _ gosmtp.AuthSession = (*session)(nil)

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, user, pass string) error {
		s.ts.mu.Lock()
		s.ts.logins = append(s.ts.logins, received{User: user, Password: pass})
		s.ts.mu.Unlock()
		if want, ok := s.o.users[user]; !ok || want != pass {
			return gosmtp.ErrAuthFailed
		}
		s.cur.User, s.cur.Password = user, pass
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *gosmtp.MailOptions) error {
	if len(s.o.users) > 0 && s.cur.User == "" {
		return gosmtp.ErrAuthRequired
	}
	s.cur.From = from
	return nil
}

func (s *session) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	if s.o.rejectRcpt {
		return &gosmtp.SMTPError{Code: 550, EnhancedCode: gosmtp.EnhancedCode{5, 1, 1}, Message: "No such user here"}
	}
	s.cur.To = append(s.cur.To, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m := s.cur
	m.Data = data
	_, m.TLS = s.conn.TLSConnectionState()
	s.ts.mu.Lock()
	s.ts.messages = append(s.ts.messages, m)
	s.ts.mu.Unlock()
	return nil
}

func (s *session) Reset()        { s.cur = received{User: s.cur.User, Password: s.cur.Password} }
func (s *session) Logout() error { return nil }

type testLogger struct{ t *testing.T }

func (l testLogger) Printf(format string, v ...any) { l.t.Logf("smtp server: "+format, v...) }
func (l testLogger) Println(v ...any)               { l.t.Log(append([]any{"smtp server:"}, v...)...) }

// selfSigned makes a certificate for host and the pool that trusts it.
func selfSigned(t *testing.T, host string) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: host},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}
