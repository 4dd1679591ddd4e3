package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// maxWebhookBytes is GitHub's own cap on webhook payloads.
const maxWebhookBytes = 25 << 20

// DefaultGitHubWebhookReads is how many GitHub webhook bodies are read at once by default.
const DefaultGitHubWebhookReads = 8

// signedWebhook is a GitHub delivery whose signature matched: for a push, the fields kiln reads
// (or why they could not be read).
type signedWebhook struct {
	push      pushEvent
	install   installationEvent
	check     checkEvent
	decodeErr error
}

// readSignedWebhook reads a GitHub delivery and checks its signature. A request without a
// well-formed X-Hub-Signature-256 (or any while the server has no secret) is refused before a byte
// of its body is read. The body, which nobody has vouched for yet, is read only while one of a few
// read slots is free (429 otherwise), and hashed as it streams: nothing but the push fields kiln
// reads is kept. It returns nil and no error when it has answered the request itself.
func (s *Server) readSignedWebhook(w http.ResponseWriter, r *http.Request) (*signedWebhook, error) {
	want, ok := hubSignature(r.Header.Get("X-Hub-Signature-256"))
	if len(s.webhookSecret) == 0 || !ok {
		return s.refuseWebhook(w, r)
	}
	if r.ContentLength > maxWebhookBytes {
		w.Header().Set("Connection", "close")
		return nil, kiln.Errorf(kiln.EPayloadTooLarge, "the request body is larger than %d MiB", maxWebhookBytes>>20)
	}
	select {
	case s.webhookReads <- struct{}{}:
	default:
		w.Header().Set("Connection", "close")
		w.Header().Set("Retry-After", "1")
		return nil, kiln.Errorf(kiln.ERateLimited, "too many webhook deliveries are being received at once; retry after 1 s")
	}
	mac := hmac.New(sha256.New, s.webhookSecret)
	body := io.TeeReader(http.MaxBytesReader(w, r.Body, maxWebhookBytes), mac)
	var got signedWebhook
	switch r.Header.Get("X-GitHub-Event") {
	case "push":
		got.push, got.decodeErr = decodePush(body)
	case "installation", "installation_repositories":
		got.install, got.decodeErr = decodeInstallation(body)
	case "check_run", "check_suite":
		got.check, got.decodeErr = decodeCheck(body)
	}
	_, err := io.Copy(io.Discard, body) // the rest, hashed
	<-s.webhookReads
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, kiln.Errorf(kiln.EPayloadTooLarge, "the request body is larger than %d MiB", maxWebhookBytes>>20)
		}
		return nil, kiln.Errorf(kiln.EBadRequest, "could not read the request body")
	}
	if !hmac.Equal(want, mac.Sum(nil)) {
		return s.refuseWebhook(w, r)
	}
	return &got, nil
}

// refuseWebhook answers 401 (or 429 when the address has failed too often), and closes the
// connection rather than read the rest of the body.
func (s *Server) refuseWebhook(w http.ResponseWriter, r *http.Request) (*signedWebhook, error) {
	w.Header().Set("Connection", "close")
	if !s.rateLimit(w, r, "addr:"+clientAddr(r), s.now()) {
		return nil, nil
	}
	w.Header().Set("WWW-Authenticate", `HMAC realm="kiln webhooks"`)
	return nil, kiln.Errorf(kiln.EInvalidToken, "the webhook signature (X-Hub-Signature-256) is missing or wrong")
}

// hubSignature decodes "sha256=<64 hex digits>".
func hubSignature(header string) ([]byte, bool) {
	sig, ok := strings.CutPrefix(header, "sha256=")
	if !ok || len(sig) != 2*sha256.Size {
		return nil, false
	}
	b, err := hex.DecodeString(sig)
	return b, err == nil
}

// decodePush reads one push event from r, token by token, keeping only the fields of pushEvent:
// the rest (the commits, the sender, ...) is skipped without being held.
func decodePush(r io.Reader) (pushEvent, error) {
	var ev pushEvent
	err := decodeFields(r, map[string]any{"ref": &ev.Ref, "after": &ev.After, "deleted": &ev.Deleted,
		"repository": &ev.Repo, "installation": &ev.Installation})
	return ev, err
}

// decodeInstallation reads an installation or installation_repositories event the same way.
func decodeInstallation(r io.Reader) (installationEvent, error) {
	var ev installationEvent
	err := decodeFields(r, map[string]any{"action": &ev.Action, "installation": &ev.Installation,
		"repositories_removed": &ev.RepositoriesRemoved})
	return ev, err
}

// decodeFields reads one JSON object from r, token by token, decoding the members named in fields
// into their destinations and skipping the rest without holding it.
func decodeFields(r io.Reader, fields map[string]any) error {
	dec := json.NewDecoder(r)
	if err := wantDelim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		if dst := fields[name]; dst != nil {
			err = dec.Decode(dst)
		} else {
			err = skipValue(dec)
		}
		if err != nil {
			return err
		}
	}
	if err := wantDelim(dec, '}'); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("webhook event: data after the object")
	}
	return nil
}

func wantDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != d {
		return fmt.Errorf("webhook event: want %v, got %v", d, tok)
	}
	return nil
}

// skipValue reads past one JSON value, however deep, a token at a time.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}
