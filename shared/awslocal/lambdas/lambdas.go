// Package lambdas answers the Lambda Invoke API (POST /2015-03-31/functions/<name>/invocations)
// for named Go handlers on this machine, so that kiln aws-local runs its functions as Lambda
// would: the payload is the real event JSON, decoded and encoded by lambda.NewHandler, and a
// function error is answered 200 with X-Amz-Function-Error: Unhandled and the error's JSON.
package lambdas

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
)

// Lambda's limits on a synchronous invocation: the request payload (6 MiB) and the function's
// response (6 MiB + 100 bytes), as Lambda's quotas give them.
const (
	MaxRequestPayload  = 6 << 20
	MaxResponsePayload = 6<<20 + 100
)

// Server answers Invoke for its functions.
type Server struct {
	functions map[string]lambda.Handler
	logger    *slog.Logger
	events    sync.WaitGroup // asynchronous invocations still running
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

// Functions names the functions served.
func (s *Server) Functions() []string {
	names := make([]string, 0, len(s.functions))
	for name := range s.functions {
		names = append(names, name)
	}
	return names
}

// ServeHTTP answers POST /2015-03-31/functions/<name>/invocations: InvocationType
// RequestResponse (the default) answers 200 with the function's result or its error; Event
// answers 202 at once and runs the function in the background; DryRun answers 204.
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
		writeError(w, http.StatusNotFound, "ResourceNotFoundException",
			"Function not found: arn:aws:lambda:us-east-1:000000000000:function:"+name)
		return
	}
	invocation := r.Header.Get("X-Amz-Invocation-Type")
	switch invocation {
	case "", "RequestResponse", "Event", "DryRun":
	default:
		writeError(w, http.StatusBadRequest, "InvalidParameterValueException", "invalid InvocationType: "+invocation)
		return
	}
	payload, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestPayload+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "InvalidRequestContentException", "could not read the request payload")
		return
	}
	if len(payload) > MaxRequestPayload {
		writeError(w, http.StatusRequestEntityTooLarge, "RequestTooLargeException",
			fmt.Sprintf("Request must be smaller than %d bytes for the InvokeFunction operation", MaxRequestPayload))
		return
	}
	if len(payload) == 0 {
		payload = []byte("{}")
	}
	switch invocation {
	case "DryRun":
		w.WriteHeader(http.StatusNoContent)
		return
	case "Event":
		s.events.Add(1)
		go func() {
			defer s.events.Done()
			if _, err := invoke(context.WithoutCancel(r.Context()), h, payload); err != nil {
				s.logger.Warn("function error (asynchronous invocation)", slog.String("function", name), slog.String("error", err.Error()))
			}
		}()
		w.WriteHeader(http.StatusAccepted)
		return
	}
	out, err := invoke(r.Context(), h, payload)
	if err == nil && len(out) > MaxResponsePayload {
		err = messages.InvokeResponse_Error{Type: "Function.ResponseSizeTooLarge",
			Message: fmt.Sprintf("Response payload size exceeded maximum allowed payload size (%d bytes).", MaxResponsePayload)}
	}
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

// Wait waits for the asynchronous invocations still running.
func (s *Server) Wait() { s.events.Wait() }

// FunctionError is the body of an invocation whose function failed, as Lambda answers it.
type FunctionError struct {
	ErrorMessage string `json:"errorMessage"`
	ErrorType    string `json:"errorType"`
}

// functionError is err as aws-lambda-go's runtime reports it (lambdaErrorResponse): an
// InvokeResponse_Error as it is, else its message and its type's name (the pointed-to type's for
// a pointer).
func functionError(err error) FunctionError {
	if ie, ok := err.(messages.InvokeResponse_Error); ok {
		return FunctionError{ErrorMessage: ie.Message, ErrorType: ie.Type}
	}
	return FunctionError{ErrorMessage: err.Error(), ErrorType: typeName(err)}
}

// typeName is the name of v's type, as aws-lambda-go's getErrorType gives it.
func typeName(v any) string {
	t := reflect.TypeOf(v)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// invoke runs the function; a panic is a function error as the runtime reports it (its value's
// text and type), not a crash of this server.
func invoke(ctx context.Context, h lambda.Handler, payload []byte) (out []byte, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = messages.InvokeResponse_Error{Message: fmt.Sprint(v), Type: typeName(v)}
		}
	}()
	return h.Invoke(ctx, payload)
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"Type": "User", "message": message})
}
