// Package apigateway stands in for an API Gateway HTTP API in front of a Lambda function, for
// kiln aws-local: each HTTP request becomes the payload 2.0 event API Gateway sends
// (events.APIGatewayV2HTTPRequest), the function is invoked with that JSON, and its response
// event becomes the HTTP response. Limits are an HTTP API's and Lambda's: a request body over
// 10 MB is refused with 413; a function that has not answered within the integration timeout
// (30 s) is answered 503 Service Unavailable, as HTTP APIs do (the function runs on, as in
// Lambda); a function response over Lambda's 6 MB is answered 502.
package apigateway

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// Function is an invocable Lambda function (lambda.NewHandler(fn) is one).
type Function interface {
	Invoke(ctx context.Context, payload []byte) ([]byte, error)
}

// An HTTP API's limits (its payload size and integration timeout) and Lambda's on a synchronous
// response.
const (
	MaxRequestBody     = 10 << 20
	IntegrationTimeout = 30 * time.Second
	MaxResponseSize    = 6<<20 + 100
)

// Handler serves HTTP by invoking Function with API Gateway events.
type Handler struct {
	Function Function
	// DomainName is the API's host name as the event tells it (default: the request's Host).
	DomainName string
	// Timeout is the integration timeout (0: IntegrationTimeout; tests shorten it).
	Timeout time.Duration
	Logger  *slog.Logger

	seq atomic.Int64
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBody+1))
	if err != nil {
		writeGatewayError(w, http.StatusBadRequest, "Bad Request")
		return
	}
	if len(body) > MaxRequestBody {
		writeGatewayError(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
		return
	}
	ev := h.event(r, body)
	payload, err := json.Marshal(ev)
	if err != nil {
		http.Error(w, `{"message":"Internal Server Error"}`, http.StatusInternalServerError)
		return
	}
	out, err, timedOut := h.invoke(r.Context(), payload)
	if timedOut {
		h.log().ErrorContext(r.Context(), "the API function did not answer within the integration timeout",
			slog.String("request_id", ev.RequestContext.RequestID), slog.Duration("timeout", h.timeout()))
		writeGatewayError(w, http.StatusServiceUnavailable, "Service Unavailable")
		return
	}
	if err != nil {
		h.log().ErrorContext(r.Context(), "the API function failed", slog.String("request_id", ev.RequestContext.RequestID), slog.String("error", err.Error()))
		writeGatewayError(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	if len(out) > MaxResponseSize {
		writeGatewayError(w, http.StatusBadGateway, "Internal Server Error")
		return
	}
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		writeGatewayError(w, http.StatusBadGateway, "Internal Server Error")
		return
	}
	respBody := []byte(resp.Body)
	if resp.IsBase64Encoded {
		if respBody, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			writeGatewayError(w, http.StatusBadGateway, "Internal Server Error")
			return
		}
	}
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	for _, c := range resp.Cookies {
		w.Header().Add("Set-Cookie", c)
	}
	w.Header().Set("Apigw-Requestid", ev.RequestContext.RequestID)
	w.Header().Set("Content-Length", strconv.Itoa(len(respBody)))
	status := resp.StatusCode
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(respBody)
	}
}

// invoke invokes the function and waits for its answer at most the integration timeout; a
// function still running then goes on without a caller, as in Lambda (neither the timeout nor
// the client's going away ends it).
func (h *Handler) invoke(ctx context.Context, payload []byte) (out []byte, err error, timedOut bool) {
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := h.Function.Invoke(context.WithoutCancel(ctx), payload)
		done <- result{out, err}
	}()
	timer := time.NewTimer(h.timeout())
	defer timer.Stop()
	select {
	case r := <-done:
		return r.out, r.err, false
	case <-timer.C:
		return nil, nil, true
	}
}

func (h *Handler) timeout() time.Duration {
	if h.Timeout > 0 {
		return h.Timeout
	}
	return IntegrationTimeout
}

// event builds the payload 2.0 event of a request, as API Gateway does: header names in lower
// case with repeated values joined by commas, cookies apart, the body base64-encoded.
func (h *Handler) event(r *http.Request, body []byte) events.APIGatewayV2HTTPRequest {
	now := time.Now().UTC()
	id := fmt.Sprintf("%s-%d", now.Format("20060102T150405"), h.seq.Add(1))
	headers := map[string]string{}
	for k, vs := range r.Header {
		if strings.EqualFold(k, "Cookie") {
			continue
		}
		headers[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	var cookies []string
	for _, c := range r.Cookies() {
		cookies = append(cookies, c.Name+"="+c.Value)
	}
	var query map[string]string
	if len(r.URL.Query()) > 0 {
		query = map[string]string{}
		for k, vs := range r.URL.Query() {
			query[k] = strings.Join(vs, ",")
		}
	}
	domain := h.DomainName
	if domain == "" {
		domain = r.Host
	}
	headers["host"] = domain
	sourceIP, _, _ := net.SplitHostPort(r.RemoteAddr)
	return events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "$default", RawPath: r.URL.EscapedPath(), RawQueryString: r.URL.RawQuery,
		Cookies: cookies, Headers: headers, QueryStringParameters: query,
		Body: base64.StdEncoding.EncodeToString(body), IsBase64Encoded: true,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey: "$default", AccountID: "000000000000", Stage: "$default", RequestID: id,
			APIID: "local", DomainName: domain, DomainPrefix: strings.SplitN(domain, ".", 2)[0],
			Time: now.Format("02/Jan/2006:15:04:05 -0700"), TimeEpoch: now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: r.Method, Path: r.URL.Path, Protocol: r.Proto, SourceIP: sourceIP, UserAgent: r.UserAgent(),
			},
		},
	}
}

// writeGatewayError answers as API Gateway does when the integration fails.
func writeGatewayError(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"message":%q}`, message)
}

func (h *Handler) log() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}
