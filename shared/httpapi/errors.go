package httpapi

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/github"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// statusOf maps every error code to its HTTP status: the one table of docs/api.md.
var statusOf = map[string]int{
	kiln.EBadRequest:                http.StatusBadRequest,
	kiln.EValidation:                http.StatusBadRequest,
	kiln.EEngineNotFound:            http.StatusBadRequest,
	kiln.EPerforceAuthFailed:        http.StatusBadRequest,
	kiln.EGitHubInstallationInvalid: http.StatusBadRequest,
	kiln.EInvalidToken:              http.StatusUnauthorized,
	kiln.EInsufficientScope:         http.StatusForbidden,
	kiln.EPlanLimitReached:          http.StatusForbidden,
	eForbidden:                      http.StatusForbidden,
	kiln.ENotFound:                  http.StatusNotFound,
	kiln.EUprojectNotFound:          http.StatusNotFound,
	eMethodNotAllowed:               http.StatusMethodNotAllowed,
	eLogPagingRequired:              http.StatusBadRequest,
	kiln.EMultipleUprojects:         http.StatusConflict,
	kiln.EGitHubNotConnected:        http.StatusConflict,
	kiln.EPerforceNotConfigured:     http.StatusConflict,
	kiln.ERepoNotAccessible:         http.StatusConflict,
	kiln.EGitHubInstallationInUse:   http.StatusConflict,
	kiln.EInvalidState:              http.StatusConflict,
	kiln.EConflict:                  http.StatusConflict,
	kiln.EPayloadTooLarge:           http.StatusRequestEntityTooLarge,
	kiln.EIdempotencyKeyReused:      http.StatusUnprocessableEntity,
	kiln.ERateLimited:               http.StatusTooManyRequests,
	kiln.EInternal:                  http.StatusInternalServerError,
	kiln.EServiceUnavailable:        http.StatusServiceUnavailable,
	github.EGitHubUnavailable:       http.StatusBadGateway,
}

// Codes that belong to HTTP, not to the domain: a 405, and a 403 for a download link that is
// not valid (tampered or expired).
const (
	eMethodNotAllowed = "method_not_allowed"
	eForbidden        = "forbidden"
	// eLogPagingRequired: the API answers through a proxy that buffers whole answers (API
	// Gateway and Lambda), so a build's log is read in JSON pages there (see BufferedAnswers).
	eLogPagingRequired = "log_paging_required"
)

// writeError answers with the envelope for err (see errorAnswer).
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, body := errorAnswer(r, err)
	switch status {
	case http.StatusUnauthorized:
		if w.Header().Get("WWW-Authenticate") == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="kiln"`)
		}
	}
	writeJSON(w, status, body)
}

// errorAnswer is the status and envelope for err. Errors that carry no code are logged and
// answered as internal with a neutral message, so nothing internal leaks.
func errorAnswer(r *http.Request, err error) (int, api.ErrorBody) {
	body := api.ErrorBody{RequestID: requestIDOf(r.Context())}
	var ke *kiln.Error
	switch {
	case errors.As(err, &ke) && statusOf[ke.Code] != 0 && ke.Code != kiln.EInternal:
		body.Code, body.Message, body.Fields, body.Candidates = ke.Code, ke.Message, ke.Fields, ke.Candidates
	default:
		loggerOf(r.Context()).ErrorContext(r.Context(), "request failed", slog.String("error", err.Error()))
		body.Code, body.Message = kiln.EInternal, "something went wrong on our side; quote the request id if you contact support"
	}
	return statusOf[body.Code], body
}
