package websocket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/apigatewaymanagementapi"
	"github.com/aws/aws-sdk-go-v2/service/apigatewaymanagementapi/types"
	ws "github.com/coder/websocket"

	"github.com/kilnbuild/kiln/shared/awslocal/iam"
)

const (
	testRegion  = "us-east-1"
	testAccount = "000000000000"
	testAPI     = "abcdef1234"
	testStage   = "live"
)

// testTemplate is the part of a stack that matters here: the live function's role may manage
// the stage's connections (as the CDK stack grants it), the api function's may not.
const testTemplate = `{"Resources":{
 "LiveAPI":{"Type":"AWS::ApiGatewayV2::Api","Properties":{"ProtocolType":"WEBSOCKET"}},
 "LiveFunctionRole":{"Type":"AWS::IAM::Role","Properties":{}},
 "LiveFunctionRoleDefaultPolicy":{"Type":"AWS::IAM::Policy","Properties":{"Roles":[{"Ref":"LiveFunctionRole"}],
  "PolicyDocument":{"Statement":[{"Effect":"Allow","Action":"execute-api:ManageConnections","Resource":[
   {"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":execute-api:",{"Ref":"AWS::Region"},":",{"Ref":"AWS::AccountId"},":",{"Ref":"LiveAPI"},"/live/POST/@connections/*"]]},
   {"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":execute-api:",{"Ref":"AWS::Region"},":",{"Ref":"AWS::AccountId"},":",{"Ref":"LiveAPI"},"/live/GET/@connections/*"]]},
   {"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":execute-api:",{"Ref":"AWS::Region"},":",{"Ref":"AWS::AccountId"},":",{"Ref":"LiveAPI"},"/live/DELETE/@connections/*"]]}]}]}}},
 "LiveFunction0A1B2C3D":{"Type":"AWS::Lambda::Function","Properties":{"Role":{"Fn::GetAtt":["LiveFunctionRole","Arn"]},
  "Environment":{"Variables":{"KILN_LIVE_ENDPOINT":{"Fn::Join":["",["https://",{"Ref":"LiveAPI"},".execute-api.",{"Ref":"AWS::Region"},".",{"Ref":"AWS::URLSuffix"},"/live"]]}}}}},
 "APIFunctionRole":{"Type":"AWS::IAM::Role","Properties":{}},
 "APIFunction4E5F6A7B":{"Type":"AWS::Lambda::Function","Properties":{"Role":{"Fn::GetAtt":["APIFunctionRole","Arn"]}}}
}}`

// function is the tiny function behind the routes: it records every event, refuses $connect
// with the status of the query's "status", and with "selfpost" tries to post to the connection
// from its own $connect.
type function struct {
	mu       sync.Mutex
	events   []events.APIGatewayWebsocketProxyRequest
	seen     chan events.APIGatewayWebsocketProxyRequest
	client   *apigatewaymanagementapi.Client
	selfPost error
}

func (f *function) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var ev events.APIGatewayWebsocketProxyRequest
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.events = append(f.events, ev)
	f.mu.Unlock()
	defer func() { f.seen <- ev }()
	resp := events.APIGatewayProxyResponse{StatusCode: 200}
	if ev.RequestContext.RouteKey == "$connect" {
		if s := ev.QueryStringParameters["status"]; s != "" {
			if s == "error" {
				return nil, errors.New("the function failed")
			}
			fmt.Sscan(s, &resp.StatusCode)
			resp.Body = `{"message":"refused"}`
		}
		if ev.QueryStringParameters["selfpost"] != "" {
			_, err := f.client.PostToConnection(ctx, &apigatewaymanagementapi.PostToConnectionInput{ConnectionId: aws.String(ev.RequestContext.ConnectionID), Data: []byte("too early")})
			f.mu.Lock()
			f.selfPost = err
			f.mu.Unlock()
		}
	}
	return json.Marshal(resp)
}

// next waits for the function's next event.
func (f *function) next(t *testing.T) events.APIGatewayWebsocketProxyRequest {
	t.Helper()
	select {
	case ev := <-f.seen:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("the function was not invoked")
		return events.APIGatewayWebsocketProxyRequest{}
	}
}

type world struct {
	g      *Gateway
	srv    *httptest.Server
	fn     *function
	client *apigatewaymanagementapi.Client // signed as the live function
}

func newWorld(t *testing.T, tune func(*Gateway)) *world {
	t.Helper()
	tmpl, err := iam.ParseTemplate([]byte(testTemplate), iam.Names{Region: testRegion, Account: testAccount, LiveAPI: testAPI})
	if err != nil {
		t.Fatal(err)
	}
	auth, err := iam.NewAuthorizer(tmpl, func(p string) string { return "KEY-" + p }, func(p string) string { return p }, nil)
	if err != nil {
		t.Fatal(err)
	}
	fn := &function{seen: make(chan events.APIGatewayWebsocketProxyRequest, 256)}
	g, err := New(fn, API{ID: testAPI, Stage: testStage, Region: testRegion, Account: testAccount}, auth, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tune != nil {
		tune(g)
	}
	srv := httptest.NewServer(g)
	t.Cleanup(func() { g.Close(); srv.Close() })
	w := &world{g: g, srv: srv, fn: fn, client: w0client(g.Endpoint(srv.URL), "KEY-live")}
	fn.client = w.client
	return w
}

// w0client is the AWS SDK's management API client at endpoint, signing with key.
func w0client(endpoint, key string) *apigatewaymanagementapi.Client {
	return apigatewaymanagementapi.New(apigatewaymanagementapi.Options{Region: testRegion, BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider(key, "secret", "")})
}

// dial connects a client with the query; it returns the connection and the $connect event.
func (w *world) dial(t *testing.T, query string) (*ws.Conn, events.APIGatewayWebsocketProxyRequest) {
	t.Helper()
	c, resp, err := ws.Dial(context.Background(), "ws"+strings.TrimPrefix(w.srv.URL, "http")+"/"+testStage+query,
		&ws.DialOptions{HTTPHeader: http.Header{"X-Test": {"a", "b"}}})
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c, w.fn.next(t)
}

func (w *world) post(ctx context.Context, id string, data []byte) error {
	_, err := w.client.PostToConnection(ctx, &apigatewaymanagementapi.PostToConnectionInput{ConnectionId: aws.String(id), Data: data})
	return err
}

// TestConnect: $connect gets the upgrade's query (every value), headers and the connection's
// context; a status other than 2xx refuses the upgrade with it, a failed function with 500;
// a post from inside $connect is GoneException, the connection not being established yet.
func TestConnect(t *testing.T) {
	w := newWorld(t, nil)
	_, ev := w.dial(t, "?EIO=4&transport=websocket&x=1&x=2")
	rc := ev.RequestContext
	if rc.RouteKey != "$connect" || rc.EventType != "CONNECT" || rc.Stage != testStage || rc.APIID != testAPI || rc.ConnectionID == "" ||
		rc.RequestID == "" || rc.ConnectedAt == 0 || rc.RequestTimeEpoch == 0 || rc.DomainName == "" || rc.Identity.SourceIP != "127.0.0.1" {
		t.Errorf("request context %+v", rc)
	}
	if ev.QueryStringParameters["EIO"] != "4" || ev.QueryStringParameters["x"] != "2" || strings.Join(ev.MultiValueQueryStringParameters["x"], ",") != "1,2" {
		t.Errorf("query %v, multi-value %v", ev.QueryStringParameters, ev.MultiValueQueryStringParameters)
	}
	if ev.Headers["Sec-Websocket-Key"] == "" || strings.Join(ev.MultiValueHeaders["X-Test"], ",") != "a,b" {
		t.Errorf("headers %v, multi-value %v", ev.Headers, ev.MultiValueHeaders)
	}
	for _, tt := range []struct {
		query string
		want  int
	}{
		{"?status=401", 401},
		{"?status=403", 403},
		{"?status=error", 500},
	} {
		t.Run(tt.query, func(t *testing.T) {
			_, resp, err := ws.Dial(context.Background(), "ws"+strings.TrimPrefix(w.srv.URL, "http")+"/"+testStage+tt.query, nil)
			if err == nil || resp == nil || resp.StatusCode != tt.want {
				t.Fatalf("dial: %v, response %v; want refused with %d", err, resp, tt.want)
			}
			w.fn.next(t)
		})
	}
	t.Run("post during $connect", func(t *testing.T) {
		w.dial(t, "?selfpost=1")
		w.fn.mu.Lock()
		err := w.fn.selfPost
		w.fn.mu.Unlock()
		var gone *types.GoneException
		if !errors.As(err, &gone) {
			t.Fatalf("a post from $connect: %v, want GoneException", err)
		}
	})
	t.Run("another path", func(t *testing.T) {
		_, resp, err := ws.Dial(context.Background(), "ws"+strings.TrimPrefix(w.srv.URL, "http")+"/"+testStage+"/socket.io/", nil)
		if err == nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("dial: %v, %v; want 403", err, resp)
		}
	})
}

// TestMessagesInOrder: every message reaches $default in the order sent, text as is and binary
// in base64; the client's close reaches $disconnect with its code.
func TestMessagesInOrder(t *testing.T) {
	w := newWorld(t, nil)
	c, connect := w.dial(t, "")
	ctx := context.Background()
	var want []string
	for i := range 30 {
		msg := fmt.Sprintf("42[\"m\",%d]", i)
		want = append(want, msg)
		if err := c.Write(ctx, ws.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Write(ctx, ws.MessageBinary, []byte{0, 1, 2}); err != nil {
		t.Fatal(err)
	}
	for i, m := range want {
		ev := w.fn.next(t)
		if ev.RequestContext.RouteKey != "$default" || ev.RequestContext.EventType != "MESSAGE" || ev.Body != m || ev.IsBase64Encoded ||
			ev.RequestContext.ConnectionID != connect.RequestContext.ConnectionID || ev.RequestContext.DomainName != connect.RequestContext.DomainName ||
			ev.RequestContext.MessageID == nil {
			t.Fatalf("message %d: %s %q base64 %v, want $default %q", i, ev.RequestContext.RouteKey, ev.Body, ev.IsBase64Encoded, m)
		}
	}
	if ev := w.fn.next(t); ev.Body != "AAEC" || !ev.IsBase64Encoded {
		t.Fatalf("binary message: %q base64 %v, want AAEC in base64", ev.Body, ev.IsBase64Encoded)
	}
	if err := c.Close(4000, "bye"); err != nil {
		t.Fatal(err)
	}
	ev := w.fn.next(t)
	if ev.RequestContext.RouteKey != "$disconnect" || ev.RequestContext.EventType != "DISCONNECT" || ev.RequestContext.DisconnectStatusCode != 4000 ||
		ev.RequestContext.ConnectionID != connect.RequestContext.ConnectionID {
		t.Fatalf("after the close: %s %s %d", ev.RequestContext.RouteKey, ev.RequestContext.ConnectionID, ev.RequestContext.DisconnectStatusCode)
	}
}

// TestClose: closing the gateway closes every connection with 1001 and waits for their
// $disconnect; a later upgrade is refused.
func TestClose(t *testing.T) {
	w := newWorld(t, nil)
	c, connect := w.dial(t, "")
	read := make(chan error, 1)
	go func() { _, _, err := c.Read(context.Background()); read <- err }() // the client answers the close
	w.g.Close()
	if err := <-read; ws.CloseStatus(err) != ws.StatusGoingAway {
		t.Fatalf("the client read %v, want a close 1001", err)
	}
	if ev := w.fn.next(t); ev.RequestContext.RouteKey != "$disconnect" || ev.RequestContext.ConnectionID != connect.RequestContext.ConnectionID {
		t.Fatalf("after Close: %s %s", ev.RequestContext.RouteKey, ev.RequestContext.ConnectionID)
	}
	if _, resp, err := ws.Dial(context.Background(), "ws"+strings.TrimPrefix(w.srv.URL, "http")+"/"+testStage, nil); err == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("an upgrade after Close: %v %v", err, resp)
	}
}
