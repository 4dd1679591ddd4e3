// Package client is a small typed client of kiln's public HTTP API, as customers' tools use it
// (the kiln command's builds and artifacts commands). It speaks only the documented API, so it
// works against kiln serve and the AWS deployment alike.
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/api"
)

// Client calls the API at BaseURL with a bearer token.
type Client struct {
	baseURL string
	token   string
	http    *http.Client
	// retryBase is the first pause before following a log again after a passing failure.
	retryBase time.Duration
}

// New returns a client of the API at baseURL (e.g. https://kiln.example.com) using token.
// httpClient may be nil for http.DefaultClient.
func New(baseURL, token string, httpClient *http.Client) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the kiln URL %q is not an http(s) URL", baseURL)
	}
	if token == "" {
		return nil, errors.New("no API token")
	}
	if httpClient == nil {
		// No overall timeout (downloads and long-polled log pages take long), but a service that
		// does not start answering within a minute is an error rather than a hung CI job.
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.ResponseHeaderTimeout = time.Minute
		httpClient = &http.Client{Transport: t}
	}
	return &Client{baseURL: strings.TrimRight(baseURL, "/"), token: token, http: httpClient, retryBase: time.Second}, nil
}

// BaseURL is the API's address as given to New, without a trailing slash.
func (c *Client) BaseURL() string { return c.baseURL }

// APIError is an error answer of the API: its HTTP status and its envelope (Code, Message,
// RequestID, Fields, Candidates).
type APIError struct {
	Status int `json:"-"`
	api.ErrorBody
	// RetryAfter is the Retry-After header's whole seconds (429), or 0.
	RetryAfter int `json:"-"`
}

func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(e.Message)
	keys := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "; %s: %s", k, e.Fields[k])
	}
	fmt.Fprintf(&b, " (%s, HTTP %d, request id %s)", e.Code, e.Status, e.RequestID)
	return b.String()
}

// do sends a request to path (with query) and decodes a JSON answer into out (when not nil).
// An error answer is an *APIError.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	var rd io.Reader
	if body != nil {
		j, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(j)
	}
	u := c.baseURL + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return c.unreachable(ctx, method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return c.answerError(method, path, resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	answer := bufio.NewReader(resp.Body)
	head, _ := answer.Peek(512)
	if webPage(resp.Header, head) {
		return &NotAPIError{BaseURL: c.baseURL, Method: method, Path: path, Status: resp.StatusCode, WebPage: true}
	}
	if err := json.NewDecoder(answer).Decode(out); err != nil {
		return fmt.Errorf("%s %s%s: the answer is not the JSON expected: %w", method, c.baseURL, path, err)
	}
	return nil
}

// decodeError reads the API's error envelope; an answer without one (a proxy's page) still gives
// the status and the X-Request-Id header when there is one.
func decodeError(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e, _ := apiError(resp, raw)
	return e
}

// apiError is the error answer resp with body raw, and whether raw was kiln's envelope (an error
// code and a message).
func apiError(resp *http.Response, raw []byte) (*APIError, bool) {
	e := &APIError{Status: resp.StatusCode}
	envelope := json.Unmarshal(raw, e) == nil && e.Code != "" && e.Message != ""
	if !envelope {
		*e = APIError{Status: resp.StatusCode}
		e.Code = "http_" + fmt.Sprint(resp.StatusCode)
		e.Message = strings.TrimSpace(http.StatusText(resp.StatusCode))
	}
	if e.RequestID == "" {
		e.RequestID = resp.Header.Get("X-Request-Id")
	}
	if e.RequestID == "" {
		e.RequestID = "none"
	}
	e.RetryAfter, _ = strconv.Atoi(resp.Header.Get("Retry-After"))
	return e, envelope
}
