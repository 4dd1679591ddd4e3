// Package delivery delivers a build's artifact to the customer's endpoint (auto deploy,
// docs/api.md, auto deploy): one multipart/form-data POST with a metadata part and the
// artifact streamed from the store. Each call is one attempt; its Result says whether it is worth
// another (network errors, 408, 429 and 5xx) and Schedule says when, so that the caller records
// the next attempt in its store instead of sleeping on it. The caller supplies the HTTP client: outbound.NewClient, so that the receiver's address
// is checked at connect time and redirects are not followed.
package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/kilnbuild/kiln/shared/outbound"
)

// Defaults of Schedule when its attempts or backoff is zero (KILN_DELIVERY_ATTEMPTS,
// KILN_DELIVERY_BACKOFF).
const (
	DefaultAttempts = 5
	DefaultBackoff  = 2 * time.Second
	// MaxWait caps one wait between attempts, from the backoff or a receiver's Retry-After.
	MaxWait = 5 * time.Minute
)

// Metadata is the JSON object sent in the metadata part.
type Metadata struct {
	BuildID   string `json:"buildId"`
	ProjectID string `json:"projectId"`
	Platform  string `json:"platform"`
	BuildType string `json:"buildType"`
	UEVersion string `json:"ueVersion"`
	Branch    string `json:"branch"`
	Commit    string `json:"commit"`
}

// Delivery is one artifact to deliver.
type Delivery struct {
	// URL is the receiver (the build setting's uploadBuildUrl), http or https.
	URL string
	// Authorization is sent as the Authorization header exactly (uploadBuildAuthHeader); no
	// header when empty.
	Authorization string
	Metadata      Metadata
	// Artifact opens the artifact for reading and tells its size; it is called once per attempt
	// and the reader is closed after the attempt.
	Artifact func() (io.ReadCloser, int64, error)
	// BuildID names the artifact part's file, <BuildID>.tar.gz; Metadata.BuildID when empty.
	BuildID string
	// OnFailure, when set, is called after a failed attempt with its precise cause (DNS,
	// refused, timeout, TLS, the status), for the service's log only: showing it to customers
	// would make kiln a probe of networks they cannot see.
	OnFailure func(cause string)
}

// Result is how a delivery went. Error is neutral and may be shown to the customer: it never
// tells a refused connection from a timeout, and names no internal address.
type Result struct {
	Succeeded bool
	// Error says why the delivery failed: "receiver answered 500", "network error",
	// "redirect (302) not followed", "address not allowed", "invalid address",
	// "artifact could not be read", "delivery cancelled". Empty on success.
	Error string
	// Status is the HTTP status of the last answer, 0 if none came.
	Status int
	// Retry tells that a failed attempt is worth another (network error, 408, 429, 5xx, an
	// unreadable artifact), and RetryAfter is the receiver's Retry-After (capped at MaxWait), or
	// -1 when it sent none: what Schedule needs. Both stay zero on success.
	Retry      bool
	RetryAfter time.Duration
}

// Deliver makes one attempt to post the artifact to d.URL: it succeeds when the receiver answers
// with a 2xx. A nil client means outbound.NewClient with no allowed ranges.
func Deliver(ctx context.Context, client *http.Client, d Delivery) Result {
	if client == nil {
		client = outbound.NewClient(outbound.Config{})
	}
	if u, err := url.Parse(d.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Result{Error: "invalid address"}
	}
	name := d.BuildID
	if name == "" {
		name = d.Metadata.BuildID
	}
	f, err := newForm(d.Metadata, name+".tar.gz")
	if err != nil {
		return Result{Error: "artifact could not be read"}
	}
	return resultOf(ctx, attempt(ctx, client, d, f), d.OnFailure)
}

// resultOf is the result of one attempt; onFailure (nil: none) hears the cause of a failed one.
func resultOf(ctx context.Context, o outcome, onFailure func(cause string)) Result {
	if o.ok {
		return Result{Succeeded: true, Status: o.status}
	}
	if onFailure != nil {
		onFailure(o.cause)
	}
	res := Result{Error: o.msg, Status: o.status, Retry: o.retry, RetryAfter: o.retryAfter}
	if ctx.Err() != nil {
		res.Error = "delivery cancelled"
	}
	return res
}

// PostJSON makes one attempt to post a JSON body to a customer endpoint (organization webhooks)
// with the same rules as an artifact delivery: any 2xx succeeds, 3xx fails, network errors, 408,
// 429 and 5xx are worth another attempt, other 4xx fail for good.
func PostJSON(ctx context.Context, client *http.Client, rawURL string, header http.Header, body []byte, onFailure func(cause string)) Result {
	if client == nil {
		client = outbound.NewClient(outbound.Config{})
	}
	if u, err := url.Parse(rawURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Result{Error: "invalid address"}
	}
	return resultOf(ctx, func() outcome {
		actx, cancel := context.WithTimeout(ctx, transferTimeout(int64(len(body))))
		defer cancel()
		req, err := http.NewRequestWithContext(actx, http.MethodPost, rawURL, bytes.NewReader(body))
		if err != nil {
			return outcome{msg: "invalid address", retryAfter: -1}
		}
		for k, v := range header {
			req.Header[k] = v
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "kiln")
		resp, err := client.Do(req)
		if err != nil {
			return transportOutcome(err, false)
		}
		defer resp.Body.Close()
		return classify(resp)
	}(), onFailure)
}

// outcome is the result of one attempt.
type outcome struct {
	ok, retry bool
	status    int
	msg       string
	cause     string // precise, for the log
	// retryAfter is the receiver's Retry-After, or -1 when it sent none.
	retryAfter time.Duration
}

// attempt makes one POST.
func attempt(ctx context.Context, client *http.Client, d Delivery, f *form) outcome {
	art, size, err := d.Artifact()
	if err != nil {
		return outcome{retry: true, msg: "artifact could not be read", cause: "read the artifact: " + err.Error(), retryAfter: -1}
	}
	body := f.body(art, size)
	ctx, cancel := context.WithTimeout(ctx, transferTimeout(size))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, body)
	if err != nil {
		body.Close()
		return outcome{msg: "invalid address", retryAfter: -1}
	}
	// A known length: sent as Content-Length, never chunked.
	req.ContentLength = body.length
	req.Header.Set("Content-Type", f.contentType)
	req.Header.Set("User-Agent", "kiln")
	if d.Authorization != "" {
		req.Header.Set("Authorization", d.Authorization)
	}
	resp, err := client.Do(req)
	if err != nil {
		return transportOutcome(err, body.failed())
	}
	defer resp.Body.Close()
	return classify(resp)
}

// transportOutcome judges an attempt that got no answer.
func transportOutcome(err error, sourceFailed bool) outcome {
	var blocked *outbound.BlockedError
	switch {
	case sourceFailed:
		return outcome{retry: true, msg: "artifact could not be read", cause: "read the artifact while sending: " + Cause(err), retryAfter: -1}
	case errors.As(err, &blocked):
		return outcome{msg: "address not allowed", cause: Cause(err), retryAfter: -1}
	default:
		return outcome{retry: true, msg: "network error", cause: Cause(err), retryAfter: -1}
	}
}

// classify judges an answer: 2xx succeeds; 3xx fails (never followed); 408, 429 and 5xx are
// retried (honouring Retry-After on 429 and 503); other 4xx fail.
func classify(resp *http.Response) outcome {
	// Read a little of the answer so that the connection can be reused.
	_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
	s := resp.StatusCode
	o := outcome{status: s, msg: fmt.Sprintf("receiver answered %d", s), retryAfter: -1}
	o.cause = "status: " + o.msg
	switch {
	case s >= 200 && s < 300:
		o.ok = true
	case s >= 300 && s < 400:
		o.msg = fmt.Sprintf("redirect (%d) not followed", s)
		o.cause = "status: " + o.msg + " (Location: " + resp.Header.Get("Location") + ")"
	case s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500:
		o.retry = true
		if s == http.StatusTooManyRequests || s == http.StatusServiceUnavailable {
			o.retryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
		}
	}
	return o
}
