package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/socketio"
)

// Recheck checks the credential of every socket of an organization again and disconnects those
// whose token or session no longer resolves to a member of it (revoked, expired, removed). The
// API calls it after a revocation or a removal.
func (s *Service) Recheck(ctx context.Context, orgID string) error {
	conns, err := s.Registry.OrganizationConns(ctx, orgID)
	if err != nil {
		return fmt.Errorf("live: recheck: %w", err)
	}
	return s.recheck(ctx, conns)
}

// RecheckAll checks every socket's credential again (a token that expired while connected).
func (s *Service) RecheckAll(ctx context.Context) error {
	conns, err := s.Registry.AllConns(ctx)
	if err != nil {
		return fmt.Errorf("live: recheck: %w", err)
	}
	return s.recheck(ctx, conns)
}

func (s *Service) recheck(ctx context.Context, conns []*Conn) error {
	var errs []error
	for _, c := range conns {
		if !c.Connected() {
			continue
		}
		p, err := s.Auth.ResolveHash(ctx, c.CredentialHash, c.Session)
		switch {
		case kiln.IsCode(err, kiln.EInvalidToken) || kiln.IsCode(err, kiln.ENotFound):
		case err != nil:
			errs = append(errs, err)
			continue
		case p.Organization != nil && p.Organization.ID == c.OrgID && p.Member.Role.Allows(kiln.ActRead):
			continue
		}
		if err := s.Disconnect(ctx, c.ID, "its credential no longer gives access to the organization"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Disconnect ends a socket: the client hears "io server disconnect" and does not reconnect by
// itself.
func (s *Service) Disconnect(ctx context.Context, connID, why string) error {
	s.log().InfoContext(ctx, "live: disconnecting a socket", slog.String("socket", connID), slog.String("why", why))
	if err := s.Sender.Send(ctx, connID, socketio.DisconnectFrame()); err != nil && !errors.Is(err, ErrGone) {
		s.log().WarnContext(ctx, "live: disconnect", slog.String("socket", connID), slog.String("error", err.Error()))
	}
	if err := s.Sender.Close(ctx, connID); err != nil && !errors.Is(err, ErrGone) {
		s.log().WarnContext(ctx, "live: close", slog.String("socket", connID), slog.String("error", err.Error()))
	}
	return s.Closed(ctx, connID)
}

// PingAll sends every socket Engine.IO's ping, and forgets those that are gone. Where no process
// holds the sockets (API Gateway), a schedule calls it within the promised ping interval.
func (s *Service) PingAll(ctx context.Context) error {
	conns, err := s.Registry.AllConns(ctx)
	if err != nil {
		return fmt.Errorf("live: ping: %w", err)
	}
	for _, c := range conns {
		if s.now().After(c.Expires) {
			_ = s.Sender.Close(ctx, c.ID)
			if err := s.Closed(ctx, c.ID); err != nil {
				return err
			}
			continue
		}
		if err := s.send(ctx, c.ID, socketio.PingFrame); err != nil {
			s.log().WarnContext(ctx, "live: ping", slog.String("socket", c.ID), slog.String("error", err.Error()))
		}
	}
	return nil
}
