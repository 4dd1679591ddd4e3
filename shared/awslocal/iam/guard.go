package iam

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
)

// Guard checks each request to a stand-in (or a proxy in front of one) against the caller's
// role before passing it on: a refused request is answered in the service's protocol and goes
// no further.
type Guard struct {
	Auth    *Authorizer
	Service Service
	Next    http.Handler
	Logger  *slog.Logger
	// MaxBody is the most of a body read to map the request (default 16 MiB); a larger one is
	// refused.
	MaxBody int64
}

func (g *Guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	limit := g.MaxBody
	if limit <= 0 {
		limit = 16 << 20
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err == nil && int64(len(body)) > limit {
		err = errors.New("the request body is larger than aws-local's IAM check reads")
	}
	if err != nil {
		g.Service.Deny(w, err)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	calls, err := g.Service.Calls(r, body)
	if err == nil {
		err = g.Auth.Authorize(KeyID(r), calls...)
	}
	if err != nil {
		logDenied(g.Logger, r, err)
		g.Service.Deny(w, err)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	g.Next.ServeHTTP(w, r)
}

// RefusedMessage is the message of the log line of every call aws-local's IAM check refuses
// (its end-to-end tests fail on any they did not expect).
const RefusedMessage = "aws-local IAM: refused"

func logDenied(logger *slog.Logger, r *http.Request, err error) {
	if logger != nil {
		logger.Warn(RefusedMessage, slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("error", err.Error()))
	}
}

// Proxy is a reverse proxy to a real emulator (DynamoDB Local) on target, with an optional
// transport (DynamoDB Local's lives in its own network namespace).
func Proxy(target string, transport http.RoundTripper) (http.Handler, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	return &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) }, Transport: transport}, nil
}
