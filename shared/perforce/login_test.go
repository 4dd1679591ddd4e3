package perforce

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

const testPassword = "correct horse battery staple"

// trusted is a client of st whose server's fingerprint is trusted already.
func trusted(t *testing.T, st fakeState) (*Client, string) {
	t.Helper()
	c, logPath := setup(t, st)
	if _, err := c.Trust(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c, logPath
}

// passwordState is the default server, where builder also has a password and its current
// ticket may have expired.
func passwordState(expired bool) fakeState {
	st := defaultState()
	st.Passwords = map[string]string{"builder": testPassword}
	if expired {
		st.ExpiredTickets = []string{testTicket}
	}
	return st
}

func TestLogin(t *testing.T) {
	t.Run("a password gets a ticket, used from then on", func(t *testing.T) {
		c, logPath := trusted(t, passwordState(false))
		c.Password, c.Ticket = testPassword, ""
		var renewed []string
		c.Renewed = func(ticket string, expires time.Time) { renewed = append(renewed, ticket) }
		before := time.Now()
		ticket, expires, err := c.Login(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if !ticketRE.MatchString(ticket) || ticket == testTicket || c.ticket() != ticket || len(renewed) != 1 || renewed[0] != ticket {
			t.Fatalf("ticket %q (client's %q, renewed %v)", ticket, c.ticket(), renewed)
		}
		if left := expires.Sub(before); left < 11*time.Hour || left > 13*time.Hour {
			t.Fatalf("expires in %v, want the server's 12 h", left)
		}
		if err := c.LoginStatus(t.Context()); err != nil {
			t.Fatalf("the new ticket does not work: %v", err)
		}
		raw, _ := os.ReadFile(logPath)
		if strings.Contains(string(raw), testPassword) {
			t.Fatal("the password reached p4's argv or environment")
		}
		if l := readLog(t, logPath)[2]; strings.Join(l.Argv[len(l.Argv)-3:], " ") != "login -a -p" {
			t.Fatalf("first call %v, want login -a -p", l.Argv)
		}
	})
	t.Run("a wrong password is an auth failure that does not show it", func(t *testing.T) {
		c, _ := trusted(t, passwordState(false))
		c.Password = "wrong-" + testPassword
		_, _, err := c.Login(t.Context())
		if !errors.Is(err, ErrAuth) || strings.Contains(err.Error(), c.Password) {
			t.Fatalf("err %v, want ErrAuth without the password", err)
		}
	})
	t.Run("no password", func(t *testing.T) {
		c, _ := trusted(t, passwordState(false))
		if _, _, err := c.Login(t.Context()); err == nil {
			t.Fatal("a login without a password worked")
		}
	})
}

// A command answered "Your session has expired" logs in again and is made once more, when the
// client has a password; without one it is ErrExpired, an ErrAuth.
func TestExpiredSessionRenews(t *testing.T) {
	t.Run("with a password", func(t *testing.T) {
		c, _ := trusted(t, passwordState(true))
		c.Password = testPassword
		renewals := 0
		c.Renewed = func(string, time.Time) { renewals++ }
		ok, err := c.StreamExists(t.Context(), "//game/main")
		if err != nil || !ok || renewals != 1 || c.ticket() == testTicket {
			t.Fatalf("stream exists %v, err %v, %d renewals, ticket %q", ok, err, renewals, c.ticket())
		}
		// A call with stdin (client -i) is made again from its start.
		c2, _ := trusted(t, passwordState(true))
		c2.Password = testPassword
		if err := c2.SaveWorkspace(t.Context(), Workspace{Name: "kiln-ws", Root: t.TempDir(), Stream: "//game/main"}); err != nil {
			t.Fatalf("client -i after an expired session: %v", err)
		}
	})
	t.Run("without a password", func(t *testing.T) {
		c, _ := trusted(t, passwordState(true))
		_, err := c.StreamExists(t.Context(), "//game/main")
		if !errors.Is(err, ErrExpired) || !errors.Is(err, ErrAuth) {
			t.Fatalf("err %v, want ErrExpired (an ErrAuth)", err)
		}
	})
}

func TestRenewIfDue(t *testing.T) {
	now := time.Now()
	for _, tt := range []struct {
		name    string
		ticket  string
		expires time.Time
		login   bool
	}{
		{"far from expiry", testTicket, now.Add(5 * time.Hour), false},
		{"within the margin", testTicket, now.Add(30 * time.Minute), true},
		{"expired", testTicket, now.Add(-time.Minute), true},
		{"no ticket yet", "", time.Time{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := trusted(t, passwordState(false))
			c.Password, c.Ticket = testPassword, tt.ticket
			logins := 0
			c.Renewed = func(string, time.Time) { logins++ }
			if err := c.RenewIfDue(t.Context(), tt.expires, now); err != nil {
				t.Fatal(err)
			}
			if (logins == 1) != tt.login {
				t.Fatalf("%d logins, want login %v", logins, tt.login)
			}
		})
	}
}

// login -s's TicketExpiration (-ztag -Mj) is read as seconds; anything else is an error, so a
// login whose expiry cannot be known is not saved.
func TestTicketExpiry(t *testing.T) {
	for _, tt := range []struct {
		name     string
		lifetime int
		want     time.Duration
		ok       bool
	}{
		{"twelve hours", 43200, 12 * time.Hour, true},
		{"one second", 1, time.Second, true},
		{"negative", -5, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := passwordState(false)
			st.TicketLifetime = tt.lifetime
			c, _ := trusted(t, st)
			got, err := c.TicketExpiry(t.Context())
			if (err == nil) != tt.ok || got != tt.want {
				t.Fatalf("TicketExpiry = %v, %v; want %v (ok %v)", got, err, tt.want, tt.ok)
			}
		})
	}
}
