package agentapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// statusOf maps the codes the host API answers with to their HTTP status, as the service's API.
var statusOf = map[string]int{
	kiln.EBadRequest:         http.StatusBadRequest,
	kiln.EValidation:         http.StatusBadRequest,
	kiln.EInvalidToken:       http.StatusUnauthorized,
	kiln.EInsufficientScope:  http.StatusForbidden, // a hosted host refused (hostedhosts)
	kiln.ENotFound:           http.StatusNotFound,
	kiln.EInvalidState:       http.StatusConflict,
	kiln.EConflict:           http.StatusConflict,
	kiln.EPayloadTooLarge:    http.StatusRequestEntityTooLarge,
	kiln.EServiceUnavailable: http.StatusServiceUnavailable,
	kiln.EInternal:           http.StatusInternalServerError,
}

type requestIDKey struct{}

func withRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

func requestIDOf(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// writeError answers with the service's error envelope. Errors without a code the host API
// answers with are logged under the request id and answered as internal: nothing leaks.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, b *kiln.Build, err error) {
	body := ErrorBody{RequestID: requestIDOf(r.Context())}
	var ke *kiln.Error
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		body.Error, body.Message = kiln.EPayloadTooLarge, "the request body is too large"
	case errors.As(err, &ke) && statusOf[ke.Code] != 0 && ke.Code != kiln.EInternal:
		body.Error, body.Message, body.Fields = ke.Code, ke.Message, ke.Fields
	default:
		attrs := []any{slog.String("request_id", body.RequestID), slog.String("path", r.URL.Path), slog.String("error", err.Error())}
		if b != nil {
			attrs = append(attrs, slog.String("build_id", b.ID), slog.String("org_id", b.OrganizationID))
		}
		s.log().ErrorContext(r.Context(), "host API request failed", attrs...)
		body.Error, body.Message = kiln.EInternal, "something went wrong on our side; quote the request id if you contact support"
	}
	status := statusOf[body.Error]
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="kiln-host"`)
	}
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decode reads a JSON object body into v; unknown fields and trailing data are bad requests.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return err
		}
		return kiln.Errorf(kiln.EBadRequest, "the body is not the JSON object this endpoint takes")
	}
	if dec.More() {
		return kiln.Errorf(kiln.EBadRequest, "the body holds more than one JSON value")
	}
	return nil
}

// decodeOptional is decode, an empty body being the zero request.
func decodeOptional(r *http.Request, v any) error {
	br := bufio.NewReader(r.Body)
	if _, err := br.Peek(1); errors.Is(err, io.EOF) {
		return nil
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{br, r.Body}
	return decode(r, v)
}

func invalid(field, problem string) error {
	return &kiln.Error{Code: kiln.EValidation, Message: "some fields are missing or invalid", Fields: map[string]string{field: problem}}
}
