package codebuild

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
)

// targetPrefix starts the X-Amz-Target of every CodeBuild operation.
const targetPrefix = "CodeBuild_20161006."

type startBuildInput struct {
	ProjectName                  string                `json:"projectName"`
	ImageOverride                string                `json:"imageOverride"`
	TimeoutInMinutesOverride     *int                  `json:"timeoutInMinutesOverride"`
	EnvironmentVariablesOverride []EnvironmentVariable `json:"environmentVariablesOverride"`
}

// apiError is an error answered as CodeBuild answers it.
type apiError struct {
	status  int
	Type    string `json:"__type"`
	Message string `json:"message"`
}

func (e *apiError) Error() string { return e.Type + ": " + e.Message }

// ServeHTTP answers the JSON 1.1 protocol: POST / with X-Amz-Target naming the operation.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), targetPrefix)
	if r.Method != http.MethodPost || !ok {
		writeJSON(w, http.StatusBadRequest, &apiError{Type: "UnknownOperationException", Message: "not a CodeBuild operation"})
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, &apiError{Type: "SerializationException", Message: "unreadable request"})
		return
	}
	var out any
	switch op {
	case "StartBuild":
		var in startBuildInput
		if err = decode(body, &in); err == nil {
			var b Build
			b, err = s.start(in)
			out = map[string]any{"build": b}
		}
	case "StopBuild":
		var in struct {
			ID string `json:"id"`
		}
		if err = decode(body, &in); err == nil {
			var b Build
			b, err = s.stop(in.ID)
			out = map[string]any{"build": b}
		}
	case "BatchGetBuilds":
		var in struct {
			IDs []string `json:"ids"`
		}
		if err = decode(body, &in); err == nil {
			found, missing := s.get(in.IDs)
			out = map[string]any{"builds": found, "buildsNotFound": missing}
		}
	default:
		err = &apiError{status: http.StatusBadRequest, Type: "UnknownOperationException", Message: "the stand-in does not answer " + op}
	}
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		writeJSON(w, ae.status, ae)
	case err != nil:
		s.cfg.Logger.Error("codebuild stand-in", slog.String("operation", op), slog.String("error", err.Error()))
		writeJSON(w, http.StatusInternalServerError, &apiError{Type: "InternalFailure", Message: err.Error()})
	default:
		writeJSON(w, http.StatusOK, out)
	}
}

func decode(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return &apiError{status: http.StatusBadRequest, Type: "InvalidInputException", Message: "the request is not valid JSON: " + err.Error()}
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
