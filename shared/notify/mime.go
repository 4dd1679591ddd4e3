package notify

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"time"
)

// maxLine is the longest body line (in octets, without CRLF) sent unencoded; RFC 5322 allows 998.
const maxLine = 998

// compose renders m as an RFC 5322 message with CRLF line endings. It refuses a recipient or
// subject that could add headers (CR or LF) and a recipient that is not one plain address.
func compose(m Message, from mail.Address, now time.Time) ([]byte, error) {
	if strings.ContainsAny(m.To, "\r\n") || strings.ContainsAny(m.Subject, "\r\n") {
		return nil, errors.New("recipient and subject must not contain CR or LF")
	}
	to, err := mail.ParseAddress(m.To)
	if err != nil || to.Address != m.To || !isASCII(to.Address) {
		return nil, fmt.Errorf("recipient %q: must be one plain ASCII email address", m.To)
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	domain := from.Address[strings.LastIndexByte(from.Address, '@')+1:]

	var b bytes.Buffer
	header := func(name, value string) { b.WriteString(fold(name + ": " + value)) }
	header("From", from.String())
	header("To", (&mail.Address{Address: to.Address}).String())
	header("Subject", mime.QEncoding.Encode("utf-8", m.Subject))
	header("Date", now.Format(time.RFC1123Z))
	header("Message-ID", "<"+hex.EncodeToString(id)+"@"+domain+">")
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	// RFC 3834: no out-of-office replies to a robot.
	header("Auto-Submitted", "auto-generated")

	text := strings.ToValidUTF8(normalizeNewlines(m.Text), "\uFFFD")
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if needsEncoding(text) {
		header("Content-Transfer-Encoding", "quoted-printable")
		b.WriteString("\r\n")
		w := quotedprintable.NewWriter(&b)
		if _, err := w.Write([]byte(text)); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		// The writer turns every LF into CRLF; make sure the message ends with a line break.
		if !bytes.HasSuffix(b.Bytes(), []byte("\r\n")) {
			b.WriteString("\r\n")
		}
	} else {
		header("Content-Transfer-Encoding", "7bit")
		b.WriteString("\r\n")
		b.WriteString(strings.ReplaceAll(text, "\n", "\r\n"))
	}
	return b.Bytes(), nil
}

// needsEncoding reports whether text has non-ASCII bytes, or lines too long to send as they are.
func needsEncoding(text string) bool {
	if !isASCII(text) {
		return true
	}
	for line := range strings.SplitSeq(text, "\n") {
		if len(line) > maxLine {
			return true
		}
	}
	return false
}

// fold renders one header field, breaking it at spaces so that lines stay near 78 characters
// (RFC 5322 2.2.3). Encoded words are at most 75 characters, so a folded subject stays valid.
func fold(field string) string {
	var out strings.Builder
	line := 0
	for i, word := range strings.Split(field, " ") {
		switch {
		case i == 0:
		case line+1+len(word) > 78 && line > 0 && word != "":
			out.WriteString("\r\n")
			line = 0
			fallthrough
		default:
			out.WriteByte(' ')
			line++
		}
		out.WriteString(word)
		line += len(word)
	}
	out.WriteString("\r\n")
	return out.String()
}
