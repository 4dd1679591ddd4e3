package httpapi

import (
	"context"
	"log/slog"
)

// Sockets are the open sockets of live build events.
type Sockets interface {
	// Recheck checks the credential of each of an organization's sockets again and disconnects
	// those that no longer give access to it.
	Recheck(ctx context.Context, orgID string) error
}

// recheckSockets makes an organization's sockets check their credential again after a change
// that may take their access away.
func (s *Server) recheckSockets(ctx context.Context, orgID string) {
	if s.sockets == nil || orgID == "" {
		return
	}
	if err := s.sockets.Recheck(context.WithoutCancel(ctx), orgID); err != nil {
		s.logger.WarnContext(ctx, "live sockets: recheck after a change of access", slog.String("organization", orgID), slog.String("error", err.Error()))
	}
}
