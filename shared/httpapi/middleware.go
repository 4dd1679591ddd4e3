package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// statusRecorder remembers the status and size of a response for the access log.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

// Flush lets streaming handlers (log follow) flush through the recorder.
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// ReadFrom passes large bodies (artifact downloads) to the connection's ReadFrom, which uses
// sendfile for a file.
func (s *statusRecorder) ReadFrom(src io.Reader) (int64, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	rf, ok := s.ResponseWriter.(io.ReaderFrom)
	if !ok {
		n, err := io.Copy(struct{ io.Writer }{s.ResponseWriter}, src)
		s.bytes += n
		return n, err
	}
	n, err := rf.ReadFrom(src)
	s.bytes += n
	return n, err
}

// withRequestContext gives each request an id (X-Request-Id on the response, request_id in logs),
// recovers panics as internal errors, and writes one structured access log line.
func (s *Server) withRequestContext(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := kiln.NewRequestID()
		logger := s.logger.With(slog.String("request_id", id))
		state := &requestState{id: id, logger: logger}
		ctx := context.WithValue(r.Context(), ctxKey{}, state)
		r = r.WithContext(ctx)
		w.Header().Set("X-Request-Id", id)
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				logger.ErrorContext(ctx, "panic in handler", slog.Any("panic", v))
				if rec.status == 0 {
					writeError(rec, r, kiln.Errorf(kiln.EInternal, "panic"))
				}
			}
			attrs := []slog.Attr{
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", rec.status),
				slog.Int64("bytes", rec.bytes),
				slog.Int64("duration_ms", time.Since(start).Milliseconds()),
				slog.String("remote", r.RemoteAddr),
			}
			if p := state.principal; p != nil {
				if p.Organization != nil {
					attrs = append(attrs, slog.String("org_id", p.Organization.ID))
				}
				attrs = append(attrs, slog.String("user_id", p.Member.User.ID))
			}
			logger.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
		}()
		next.ServeHTTP(rec, r)
	})
}
