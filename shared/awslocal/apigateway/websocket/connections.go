package websocket

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/kilnbuild/kiln/shared/awslocal/iam"
)

// serveConnections answers the @connections API, once aws-local's IAM allowed the call:
// POST sends the body to the connection as one message, GET describes it, DELETE closes it.
// A connection that is not open (closed, unknown, or still in $connect) is GoneException
// (410); a post over 128 KB is PayloadTooLargeException (413).
func (g *Gateway) serveConnections(w http.ResponseWriter, r *http.Request) {
	_, id, err := iam.ConnectionPath(r.URL)
	if err != nil {
		writeError(w, http.StatusForbidden, "", "Forbidden")
		return
	}
	c := g.lookup(r.Context(), id)
	if c == nil {
		writeError(w, http.StatusGone, "GoneException", "")
		return
	}
	switch r.Method {
	case http.MethodPost:
		data, err := io.ReadAll(io.LimitReader(r.Body, MaxMessage+1))
		if err != nil {
			writeError(w, http.StatusBadRequest, "BadRequestException", "the request body could not be read")
			return
		}
		if len(data) > MaxMessage {
			writeError(w, http.StatusRequestEntityTooLarge, "PayloadTooLargeException", "Message too long")
			return
		}
		if err := c.post(r.Context(), data); err != nil {
			g.logger.WarnContext(r.Context(), "websocket api: a post to a connection failed", slog.String("connection_id", id), slog.String("error", err.Error()))
			writeError(w, http.StatusGone, "GoneException", "")
			return
		}
		w.WriteHeader(http.StatusOK)
	case http.MethodGet:
		c.mu.Lock()
		last := c.lastActive
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"connectedAt":  c.connectedAt.UTC().Format(time.RFC3339Nano),
			"lastActiveAt": last.UTC().Format(time.RFC3339Nano),
			"identity":     map[string]string{"sourceIp": c.sourceIP, "userAgent": c.userAgent},
		})
	case http.MethodDelete:
		c.end(statusNormal, "")
		w.WriteHeader(http.StatusNoContent)
	default:
		writeError(w, http.StatusForbidden, "", "Forbidden")
	}
}
