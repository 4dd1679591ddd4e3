// Package lambdas answers the Lambda Invoke API (POST /2015-03-31/functions/<name>/invocations)
// for named Go handlers on this machine, so that kiln aws-local runs its functions as Lambda
// would: the payload is the real event JSON, decoded and encoded by lambda.NewHandler, and a
// function error is answered 200 with X-Amz-Function-Error: Unhandled and the error's JSON.
package lambdas

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
)

// maxPayload is Lambda's limit on a synchronous invocation's payload.
const maxPayload = 6 << 20

// Server answers Invoke for its functions.
type Server struct {
	functions map[string]lambda.Handler
	logger    *slog.Logger
}

// New serves functions by name; each value is a handler function of a form lambda.NewHandler
// takes (func(ctx, Event) (Out, error) and the like).
func New(functions map[string]any, logger *slog.Logger) *Server {
	s := &Server{functions: map[string]lambda.Handler{}, logger: logger}
	for name, fn := range functions {
		s.functions[name] = lambda.NewHandler(fn)
	}
	return s
}

// ServeHTTP answers POST /2015-03-31/functions/<name>/invocations.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/2015-03-31/functions/")
	name, ok2 := strings.CutSuffix(rest, "/invocations")
	if !ok || !ok2 || r.Method != http.MethodPost {
		writeError(w, http.StatusNotFound, "ResourceNotFoundException", "no such route: "+r.Method+" "+r.URL.Path)
		return
	}
	if i := strings.LastIndex(name, ":function:"); i >= 0 { // a function ARN names it too
		name = name[i+len(":function:"):]
	}
	h := s.functions[name]
	if h == nil {
		writeError(w, http.StatusNotFound, "ResourceNotFoundException", "Function not found: "+name)
		return
	}
	payload, err := io.ReadAll(io.LimitReader(r.Body, maxPayload+1))
	if err != nil || len(payload) > maxPayload {
		writeError(w, http.StatusRequestEntityTooLarge, "RequestTooLargeException", "the request payload is too large or unreadable")
		return
	}
	if len(payload) == 0 {
		payload = []byte("{}")
	}
	out, err := h.Invoke(r.Context(), payload)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amz-Executed-Version", "$LATEST")
	if err != nil {
		s.logger.WarnContext(r.Context(), "function error", slog.String("function", name), slog.String("error", err.Error()))
		w.Header().Set("X-Amz-Function-Error", "Unhandled")
		w.WriteHeader(http.StatusOK)
		json.NewEncoder(w).Encode(functionError(err))
		return
	}
	w.WriteHeader(http.StatusOK)
	w.Write(out)
}

// FunctionError is the body of an invocation whose function failed, as Lambda answers it.
type FunctionError struct {
	ErrorMessage string `json:"errorMessage"`
	ErrorType    string `json:"errorType"`
}

// functionError is err as the Go runtime reports it: its message, and its type's name.
func functionError(err error) FunctionError {
	var ie messages.InvokeResponse_Error
	if errors.As(err, &ie) {
		return FunctionError{ErrorMessage: ie.Message, ErrorType: ie.Type}
	}
	t := reflect.TypeOf(err)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return FunctionError{ErrorMessage: err.Error(), ErrorType: t.Name()}
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"Type": "User", "message": message})
}
