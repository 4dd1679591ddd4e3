package kiln

import (
	"errors"
	"fmt"
)

// Error codes. They are the stable `error` values of the API (docs/api.md); the HTTP layer maps
// each to its status in one table.
const (
	EBadRequest                = "bad_request"
	EValidation                = "validation_failed"
	EEngineNotFound            = "engine_not_found"
	EPerforceAuthFailed        = "perforce_auth_failed"
	EGitHubInstallationInvalid = "github_installation_invalid"
	EInvalidToken              = "invalid_token"
	EInsufficientScope         = "insufficient_scope"
	ENotFound                  = "not_found"
	EUprojectNotFound          = "uproject_not_found"
	EMultipleUprojects         = "multiple_uprojects"
	EGitHubNotConnected        = "github_not_connected"
	EPerforceNotConfigured     = "perforce_not_configured"
	ERepoNotAccessible         = "repo_not_accessible"
	EGitHubInstallationInUse   = "github_installation_in_use"
	EInvalidState              = "invalid_state"
	EConflict                  = "conflict"
	EIdempotencyKeyReused      = "idempotency_key_reused"
	EPlanLimitReached          = "plan_limit_reached"
	EPayloadTooLarge           = "payload_too_large"
	ERateLimited               = "rate_limited"
	EInternal                  = "internal"

	// EServiceUnavailable: the service lacks something the operator must provide (a p4 client).
	EServiceUnavailable = "service_unavailable"
)

// Error is an error that carries a code the API can show. Messages are written for the customer;
// anything that is not an *Error is reported as "internal" with a neutral message.
type Error struct {
	Code    string
	Message string
	// Fields names the request fields at fault (validation_failed) and what is wrong with each.
	Fields map[string]string
	// Candidates lists the paths found, for multiple_uprojects.
	Candidates []string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// NotFound returns the not_found error for a kind of resource.
func NotFound(kind string) *Error { return Errorf(ENotFound, "%s not found", kind) }

// ErrorCode returns the code of the first *Error in err's chain, or EInternal.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// IsCode reports whether err carries the given code.
func IsCode(err error, code string) bool { return err != nil && ErrorCode(err) == code }

// FieldErrors collects validation problems, one per field, and turns them into one
// validation_failed error.
type FieldErrors map[string]string

// Add records a problem with a field; the first problem for a field wins.
func (f FieldErrors) Add(field, problem string) {
	if _, ok := f[field]; !ok {
		f[field] = problem
	}
}

// Err returns nil when nothing was recorded, else a validation_failed *Error.
func (f FieldErrors) Err() error {
	if len(f) == 0 {
		return nil
	}
	return &Error{Code: EValidation, Message: "some fields are missing or invalid", Fields: f}
}
