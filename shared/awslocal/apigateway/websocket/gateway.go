// Package websocket stands in for an API Gateway WebSocket API in front of one Lambda function,
// for kiln aws-local: its $connect, $disconnect and $default routes all invoke the function with
// events.APIGatewayWebsocketProxyRequest, and its stage's @connections management API
// (PostToConnection, GetConnection, DeleteConnection) answers the AWS SDK's
// apigatewaymanagementapi client, each call checked by aws-local's IAM
// (execute-api:ManageConnections).
//
// As in AWS ("Manage connected users and client apps: $connect and $disconnect routes" in API
// Gateway's developer guide): the upgrade waits for the $connect invocation and is refused with
// its status when it answers other than 2xx; the connection exists (a post to it succeeds)
// only once $connect has answered; $disconnect is invoked, best effort, once either side closed.
// Every message of a connection is handed to $default in order, one at a time; a route
// response is not sent back (kiln's routes have none: the function posts instead).
//
// The quotas of "Quotas for configuring and running a WebSocket in API Gateway" hold: a frame
// from the client over 32 KB or a message over 128 KB closes the connection with 1009, a post
// over 128 KB is refused with PayloadTooLargeException (413) and a post is sent in frames of at
// most 32 KB; a connection without a data message either way for 10 minutes, or open for 2
// hours, is closed with 1001 (control frames, pings, are not activity here).
package websocket

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kilnbuild/kiln/shared/awslocal/iam"
)

// Function is an invocable Lambda function (lambda.NewHandler(fn) is one), as
// apigateway.Function.
type Function interface {
	Invoke(ctx context.Context, payload []byte) ([]byte, error)
}

// The WebSocket API quotas the stand-in enforces (they cannot be raised in AWS).
const (
	MaxFrame    = 32 << 10
	MaxMessage  = 128 << 10
	IdleTimeout = 10 * time.Minute
	MaxDuration = 2 * time.Hour
)

// API names the WebSocket API as the stack's template does: its id (what the template's
// Ref of the API resolves to, iam.Names.LiveAPI), its stage, and the region and account of its
// ARNs.
type API struct {
	ID, Stage, Region, Account string
}

// Gateway is the WebSocket API's stage: WebSocket upgrades at /<stage> (or /<stage>/) and the
// management API at /<stage>/@connections/<id>; anything else is 403 Forbidden, as API Gateway
// answers a path below the stage. Serve it where the ResponseWriter is an http.Hijacker (the
// upgrade takes the connection over). Set the exported fields before serving.
type Gateway struct {
	// IdleTimeout and MaxDuration end connections (0: AWS's IdleTimeout and MaxDuration; tests
	// shorten them).
	IdleTimeout, MaxDuration time.Duration
	// DomainName is the API's host name as the events tell it (default: the request's Host).
	DomainName string
	// Meter, when set, is told what a WebSocket API bills (its pricing's two meters): each
	// message a client sent or a post delivered, and each connection's minutes once it ended.
	Meter func(Usage)

	fn     Function
	api    API
	auth   *iam.Authorizer
	logger *slog.Logger
	manage http.Handler // the @connections API behind aws-local's IAM check

	mu     sync.Mutex
	conns  map[string]*conn
	closed bool
	wg     sync.WaitGroup // connections and their $disconnect invocations
	seq    atomic.Int64
}

// New makes the stage of api in front of fn; auth checks every @connections call (a caller
// whose role in the template lacks execute-api:ManageConnections on the stage is refused).
func New(fn Function, api API, auth *iam.Authorizer, logger *slog.Logger) (*Gateway, error) {
	switch {
	case fn == nil:
		return nil, errors.New("websocket api: no function")
	case auth == nil:
		return nil, errors.New("websocket api: no IAM authorizer (every @connections call is checked)")
	case api.ID == "" || api.Stage == "" || api.Region == "" || api.Account == "" || strings.Contains(api.Stage, "/"):
		return nil, errors.New("websocket api: the API's id, stage, region and account are required")
	}
	if logger == nil {
		logger = slog.Default()
	}
	g := &Gateway{fn: fn, api: api, auth: auth, logger: logger, conns: map[string]*conn{}}
	g.manage = &iam.Guard{Auth: auth, Service: iam.ManageConnections{ARNs: iam.ARNs{Region: api.Region, Account: api.Account}, APIID: api.ID},
		Next: http.HandlerFunc(g.serveConnections), Logger: logger}
	return g, nil
}

// Endpoint is the management API's endpoint (the apigatewaymanagementapi client's
// BaseEndpoint, KILN_LIVE_ENDPOINT) when the gateway is served at base (http://host:port).
func (g *Gateway) Endpoint(base string) string {
	return strings.TrimSuffix(base, "/") + "/" + g.api.Stage
}

func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.EscapedPath()
	switch {
	case p == "/"+g.api.Stage || p == "/"+g.api.Stage+"/":
		g.serveUpgrade(w, r)
	case strings.HasPrefix(p, "/"+g.api.Stage+"/@connections/") || strings.HasPrefix(p, "/"+g.api.Stage+"/%40connections/"):
		g.manage.ServeHTTP(w, r)
	default:
		writeError(w, http.StatusForbidden, "", "Forbidden")
	}
}

// Close closes every connection (1001, going away) and waits for their $disconnect
// invocations; later upgrades are refused.
func (g *Gateway) Close() {
	g.mu.Lock()
	g.closed = true
	conns := make([]*conn, 0, len(g.conns))
	for _, c := range g.conns {
		conns = append(conns, c)
	}
	g.mu.Unlock()
	for _, c := range conns {
		<-c.ready
		if c.ws != nil {
			c.end(statusGoingAway, "Going away")
		}
	}
	g.wg.Wait()
}

func (g *Gateway) idleTimeout() time.Duration {
	if g.IdleTimeout > 0 {
		return g.IdleTimeout
	}
	return IdleTimeout
}

func (g *Gateway) maxDuration() time.Duration {
	if g.MaxDuration > 0 {
		return g.MaxDuration
	}
	return MaxDuration
}

// lookup returns the open connection of an id, once its upgrade ended, or nil.
func (g *Gateway) lookup(ctx context.Context, id string) *conn {
	g.mu.Lock()
	c := g.conns[id]
	g.mu.Unlock()
	if c == nil {
		return nil
	}
	select {
	case <-c.ready:
	case <-ctx.Done():
		return nil
	}
	select {
	case <-c.done:
		return nil
	default:
	}
	if c.ws == nil {
		return nil
	}
	return c
}

// Usage is what a WebSocket API is billed by: messages, counted in 32 KB increments (a message
// of 40 KB is two), and connection minutes (not rounded).
type Usage struct {
	Messages, ConnectionMinutes float64
}

func (g *Gateway) meter(u Usage) {
	if g.Meter != nil {
		g.Meter(u)
	}
}

// messages is a message's count in 32 KB increments (at least one).
func messages(size int) float64 {
	return float64(max(1, (size+MaxFrame-1)/MaxFrame))
}

// newConnectionID makes an id shaped as API Gateway's (16 characters of base64, such as
// "L0SM9cOFvHcCIhw="): a client must URL-encode it in a path.
func newConnectionID() string {
	b := make([]byte, 11)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}
