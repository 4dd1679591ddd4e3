package websocket

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	ws "github.com/coder/websocket"
)

// invokeConnect runs the $connect route: the function's answer, or an error when it failed
// or did not answer within the integration timeout.
func (g *Gateway) invokeConnect(ctx context.Context, c *conn, r *http.Request) (events.APIGatewayProxyResponse, error) {
	var resp events.APIGatewayProxyResponse
	ev := g.event(c, "$connect", "CONNECT")
	ev.Headers, ev.MultiValueHeaders = map[string]string{}, map[string][]string{}
	for k, vs := range r.Header {
		ev.Headers[k] = vs[len(vs)-1]
		ev.MultiValueHeaders[k] = vs
	}
	ev.Headers["Host"], ev.MultiValueHeaders["Host"] = c.host, []string{c.host}
	if q := r.URL.Query(); len(q) > 0 {
		ev.QueryStringParameters, ev.MultiValueQueryStringParameters = map[string]string{}, map[string][]string{}
		for k, vs := range q {
			ev.QueryStringParameters[k] = vs[len(vs)-1]
			ev.MultiValueQueryStringParameters[k] = vs
		}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), integrationLimit)
	defer cancel()
	out, err := g.invoke(ctx, ev)
	if err != nil {
		return resp, err
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return resp, errors.New("the $connect answer is not an API Gateway proxy response: " + err.Error())
	}
	if resp.StatusCode == 0 {
		resp.StatusCode = http.StatusOK
	}
	return resp, nil
}

// invokeDefault runs the $default route with one message: text as is, binary in base64.
func (g *Gateway) invokeDefault(c *conn, typ ws.MessageType, data []byte) {
	ev := g.event(c, "$default", "MESSAGE")
	ev.RequestContext.MessageID = newConnectionID()
	if typ == ws.MessageBinary {
		ev.Body, ev.IsBase64Encoded = base64Std(data), true
	} else {
		ev.Body = string(data)
	}
	if _, err := g.invoke(context.Background(), ev); err != nil {
		g.logger.Warn("websocket api: the $default invocation failed", slog.String("connection_id", c.id), slog.String("error", err.Error()))
	}
}

// invokeDisconnect runs the $disconnect route, best effort (its answer is not used).
func (g *Gateway) invokeDisconnect(c *conn, code int64, reason string) {
	ev := g.event(c, "$disconnect", "DISCONNECT")
	ev.Headers = map[string]string{"Host": c.host, "X-Forwarded-For": c.sourceIP}
	ev.MultiValueHeaders = map[string][]string{"Host": {c.host}, "X-Forwarded-For": {c.sourceIP}}
	ev.RequestContext.DisconnectStatusCode = code
	ev.RequestContext.DisconnectReason = &reason
	if _, err := g.invoke(context.Background(), ev); err != nil {
		g.logger.Warn("websocket api: the $disconnect invocation failed", slog.String("connection_id", c.id), slog.String("error", err.Error()))
	}
}

func (g *Gateway) invoke(ctx context.Context, ev events.APIGatewayWebsocketProxyRequest) ([]byte, error) {
	payload, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	return g.fn.Invoke(ctx, payload)
}
