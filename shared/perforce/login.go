package perforce

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// RenewBefore is how long before its expiry kiln logs in again for a new ticket.
const RenewBefore = time.Hour

// ticketRE is what a ticket p4 login -p prints looks like (32 hex digits on a real server).
var ticketRE = regexp.MustCompile(`^[A-Za-z0-9]{8,128}$`)

// ticket is the current ticket.
func (c *Client) ticket() string {
	ticketMu.Lock()
	defer ticketMu.Unlock()
	return c.Ticket
}

// CurrentTicket is the ticket the client uses now (a login may have replaced the one it was
// given).
func (c *Client) CurrentTicket() string { return c.ticket() }

// redact is the first line of a p4 error text with the ticket and the password replaced.
func (c *Client) redact(s string) string {
	if c.Password != "" {
		s = strings.ReplaceAll(s, c.Password, "[redacted]")
	}
	return firstLine(s, c.ticket())
}

// Login logs the user in with Password (p4 login -a -p, the password on stdin only): a ticket
// valid from any host, which the client uses from now on (and tells Renewed of), and when it
// expires (p4 login -s). A refused password is an *Error wrapping ErrAuth.
func (c *Client) Login(ctx context.Context) (ticket string, expires time.Time, err error) {
	if c.Password == "" {
		return "", time.Time{}, errors.New("perforce: login needs a password")
	}
	if strings.ContainsAny(c.Password, "\r\n\x00") {
		return "", time.Time{}, errors.New("perforce: invalid password")
	}
	out := &capped{limit: 64 << 10}
	err = c.callOnce(ctx, c.Timeout, callOptions{stdin: strings.NewReader(c.Password + "\n"), stdout: out, stdoutCap: out, noTicket: true},
		"login", "-a", "-p")
	if err != nil {
		return "", time.Time{}, err
	}
	ticket = lastLine(out.buf.String())
	if !ticketRE.MatchString(ticket) {
		return "", time.Time{}, &Error{Command: "login", Message: "p4 login -p printed no ticket"}
	}
	ticketMu.Lock()
	c.Ticket = ticket
	ticketMu.Unlock()
	left, err := c.TicketExpiry(ctx)
	if err != nil {
		return "", time.Time{}, err
	}
	expires = time.Now().Add(left).Truncate(time.Second)
	if c.Renewed != nil {
		c.Renewed(ticket, expires)
	}
	return ticket, expires, nil
}

// lastLine is the last non-empty line of p4 login -p's output, after its password prompt.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	return strings.TrimSpace(strings.TrimPrefix(last, "Enter password:"))
}

// TicketExpiry is how long the current ticket has left (p4 login -s, TicketExpiration in
// seconds); 0 for one that does not say.
func (c *Client) TicketExpiry(ctx context.Context) (time.Duration, error) {
	recs, err := c.runOnce(ctx, "login", "-s")
	if err != nil {
		return 0, err
	}
	for _, r := range recs {
		if v, ok := r["TicketExpiration"]; ok {
			secs, err := strconv.ParseInt(v, 10, 64)
			if err != nil || secs < 0 {
				return 0, &Error{Command: "login", Message: "TicketExpiration " + strconv.Quote(v) + " is not a number of seconds"}
			}
			return time.Duration(secs) * time.Second, nil
		}
	}
	return 0, nil
}

// renewAfter logs in again when err says the session expired and the client has a password;
// it reports whether the call should be made once more.
func (c *Client) renewAfter(ctx context.Context, err error) bool {
	if c.Password == "" || !errors.Is(err, ErrExpired) {
		return false
	}
	_, _, lerr := c.Login(ctx)
	return lerr == nil
}

// RenewIfDue logs in again when the client has a password and no ticket, or one that expires
// within RenewBefore of now.
func (c *Client) RenewIfDue(ctx context.Context, expires, now time.Time) error {
	if c.Password == "" {
		return nil
	}
	if c.ticket() != "" && !expires.IsZero() && expires.Sub(now) > RenewBefore {
		return nil
	}
	_, _, err := c.Login(ctx)
	return err
}
