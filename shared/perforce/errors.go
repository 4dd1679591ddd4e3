package perforce

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// ErrNoClient is a p4 client (KILN_P4) that is missing or cannot be run: the operator's problem,
// not the customer's, so the API answers 503 service_unavailable.
var ErrNoClient = kiln.Errorf(kiln.EServiceUnavailable,
	"this kiln service has no Perforce client; its operator must install p4 or point KILN_P4 at it")

// Errors a p4 call is reported as; compare with errors.Is. An *Error wraps one of them, or none
// when the failure is not one of these.
var (
	// ErrAuth: the user or ticket was refused (invalid, expired, unknown user).
	ErrAuth = errors.New("perforce: credentials refused")
	// ErrExpired: the session's ticket expired (it is an ErrAuth too).
	ErrExpired = fmt.Errorf("%w: the ticket expired", ErrAuth)
	// ErrUnreachable: the server could not be reached.
	ErrUnreachable = errors.New("perforce: server unreachable")
	// ErrNotFound: the file, stream or change does not exist.
	ErrNotFound = errors.New("perforce: not found")
	// ErrTrust: the SSL server's fingerprint is not trusted, or differs from the one recorded.
	ErrTrust = errors.New("perforce: server fingerprint not trusted")
	// ErrTimeout: the call was killed at its deadline.
	ErrTimeout = errors.New("perforce: timed out")
	// ErrTooLarge: the output passed its size cap.
	ErrTooLarge = errors.New("perforce: output too large")
	// ErrOutsideWorkspace: the server asked p4 to write a file outside the directories
	// P4CLIENTPATH allows (the workspace, or none), and p4 refused.
	ErrOutsideWorkspace = errors.New("perforce: the server sent a file to write outside the workspace")
)

// Error is a failed p4 call: the command (its first word only, never arguments or environment),
// a one-line message from p4 with the ticket redacted, and the kind.
type Error struct {
	Command string
	Message string
	Kind    error
}

func (e *Error) Error() string {
	s := "perforce: p4 " + e.Command
	if e.Kind != nil {
		s += ": " + strings.TrimPrefix(e.Kind.Error(), "perforce: ")
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

func (e *Error) Unwrap() error { return e.Kind }

// The texts a real server and client answer with, matched on p4's messages and stderr. Order
// matters: the auth texts come first ("User x doesn't exist." is an auth failure, not ErrNotFound).
var patterns = []struct {
	text string
	kind error
}{
	{"is not inside permitted filesystem path", ErrOutsideWorkspace}, // File x is not inside permitted filesystem path y
	{"Perforce password (P4PASSWD) invalid or unset.", ErrAuth},
	{"Your session has expired, please login again.", ErrExpired},
	{"Password invalid.", ErrAuth},
	{"Access for user '", ErrAuth}, // Access for user 'x' has not been enabled by 'p4 protect'.
	{"User ", ErrAuth},             // User xyz doesn't exist.
	{"Connect to server failed", ErrUnreachable},
	{"TCP connect to ", ErrUnreachable},
	{"SSL connect to ", ErrUnreachable},
	{"IDENTIFICATION HAS CHANGED", ErrTrust},
	{"The authenticity of '", ErrTrust},
	{"no such file(s).", ErrNotFound},
	{"doesn't exist", ErrNotFound},
	{"unknown.", ErrNotFound}, // Change 99 unknown.
	{"file(s) not in client view.", ErrNotFound},
}

// classify returns the kind of a p4 error text, or nil.
func classify(stderr string) error {
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimSpace(line)
		for _, p := range patterns {
			if p.text == "User " {
				if strings.HasPrefix(line, "User ") && strings.HasSuffix(line, " doesn't exist.") {
					return p.kind
				}
				continue
			}
			if strings.Contains(line, p.text) {
				return p.kind
			}
		}
	}
	return nil
}

// firstLine returns the first non-empty line of s, with secret replaced, at most 200 bytes.
func firstLine(s, secret string) string {
	if secret != "" {
		s = strings.ReplaceAll(s, secret, "[redacted]")
	}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if len(line) > 200 {
			line = line[:200]
		}
		return line
	}
	return ""
}
