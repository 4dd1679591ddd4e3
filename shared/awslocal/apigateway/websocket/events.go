package websocket

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// event is the part of a route's event every route shares: the request context API Gateway
// gives a WebSocket route.
func (g *Gateway) event(c *conn, routeKey, eventType string) events.APIGatewayWebsocketProxyRequest {
	now := time.Now().UTC()
	id := fmt.Sprintf("%s-%d", now.Format("20060102T150405"), g.seq.Add(1))
	return events.APIGatewayWebsocketProxyRequest{
		RequestContext: events.APIGatewayWebsocketProxyRequestContext{
			RouteKey: routeKey, EventType: eventType, MessageDirection: "IN",
			ConnectionID: c.id, ConnectedAt: c.connectedAt.UnixMilli(),
			RequestID: id, ExtendedRequestID: id,
			RequestTime: now.Format("02/Jan/2006:15:04:05 -0700"), RequestTimeEpoch: now.UnixMilli(),
			Stage: g.api.Stage, APIID: g.api.ID, AccountID: g.api.Account, DomainName: c.host,
			Identity: events.APIGatewayRequestIdentity{SourceIP: c.sourceIP, UserAgent: c.userAgent},
		},
	}
}

// domain is the API's host name: DomainName, else the upgrade request's Host.
func (g *Gateway) domain(host string) string {
	if g.DomainName != "" {
		return g.DomainName
	}
	return host
}

// headerHas reports whether a comma-separated header holds token (case-insensitive).
func headerHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// writeError answers as API Gateway does: a JSON message, and for the management API the
// error's type in X-Amzn-ErrorType (what the AWS SDK reads).
func writeError(w http.ResponseWriter, status int, errorType, message string) {
	w.Header().Set("Content-Type", "application/json")
	if errorType != "" {
		w.Header().Set("X-Amzn-ErrorType", errorType)
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": message})
}
