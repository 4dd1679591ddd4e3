package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/socketio"
)

// roomRequest is the argument of join:build and leave:build.
type roomRequest struct {
	BuildID string `json:"buildId"`
	FromSeq *int64 `json:"fromSeq"`
}

// event handles a client's event.
func (s *Service) event(ctx context.Context, c *Conn, p socketio.Packet) error {
	name, args, err := p.EventName()
	if err != nil {
		return s.hangUp(ctx, c.ID, err.Error())
	}
	var req roomRequest
	if len(args) > 0 {
		if err := json.Unmarshal(args[0], &req); err != nil {
			return s.refuse(ctx, c, p.ID, "", kiln.EValidation, name+" takes {buildId, fromSeq}")
		}
	}
	switch name {
	case "join:build":
		return s.join(ctx, c, p.ID, req)
	case "leave:build":
		if err := s.Registry.Leave(ctx, c.ID, Room{c.OrgID, req.BuildID}); err != nil {
			return fmt.Errorf("live: leave: %w", err)
		}
		return s.ack(ctx, c, p.ID)
	}
	return s.refuse(ctx, c, p.ID, req.BuildID, kiln.EValidation, fmt.Sprintf("unknown event %q: send join:build or leave:build", name))
}

// join puts a socket in a build's room: it gets the lines after fromSeq (none before it joined
// when it gives none), then the build's status, then every line and change as they come.
func (s *Service) join(ctx context.Context, c *Conn, ack int64, req roomRequest) error {
	switch {
	case !kiln.ValidID(req.BuildID):
		return s.refuse(ctx, c, ack, req.BuildID, kiln.ENotFound, "build not found")
	case req.FromSeq != nil && *req.FromSeq < 0:
		return s.refuse(ctx, c, ack, req.BuildID, kiln.EValidation, "fromSeq must be a line's seq (0 or more)")
	case !c.Role.Allows(kiln.ActRead):
		return s.refuse(ctx, c, ack, req.BuildID, kiln.EInsufficientScope, "your role may not read builds")
	}
	b, err := s.Builds.GetBuild(ctx, c.OrgID, req.BuildID)
	if kiln.IsCode(err, kiln.ENotFound) {
		return s.refuse(ctx, c, ack, req.BuildID, kiln.ENotFound, "build not found")
	}
	if err != nil {
		return fmt.Errorf("live: join: %w", err)
	}
	var from int64
	if req.FromSeq != nil {
		from = *req.FromSeq
	} else if from, err = s.Logs.Last(ctx, c.OrgID, b.ID); err != nil {
		return fmt.Errorf("live: join: %w", err)
	}
	room := Room{c.OrgID, b.ID}
	switch err := s.Registry.Join(ctx, c.ID, room, Cursor{Seq: from}, MaxRooms); {
	case errors.Is(err, ErrTooManyRooms):
		return s.refuse(ctx, c, ack, req.BuildID, kiln.ERateLimited,
			fmt.Sprintf("a connection watches at most %d builds at once: leave one (leave:build) first", MaxRooms))
	case errors.Is(err, ErrNoConn):
		return nil // closed meanwhile
	case err != nil:
		return fmt.Errorf("live: join: %w", err)
	}
	if err := s.ack(ctx, c, ack); err != nil {
		return err
	}
	return s.flush(ctx, c.ID, room, update{build: b})
}

// ack answers an event's acknowledgement with {ok: true}.
func (s *Service) ack(ctx context.Context, c *Conn, id int64) error {
	if id < 0 {
		return nil
	}
	frame, err := socketio.AckFrame(id, map[string]bool{"ok": true})
	if err != nil {
		return err
	}
	return s.send(ctx, c.ID, frame)
}

// refuse answers an event that was refused: its acknowledgement gets {error, message}; without
// one, the socket gets build:error {buildId, error, message}.
func (s *Service) refuse(ctx context.Context, c *Conn, ack int64, buildID, code, message string) error {
	var frame string
	var err error
	if ack >= 0 {
		frame, err = socketio.AckFrame(ack, map[string]string{"error": code, "message": message})
	} else {
		frame, err = socketio.EventFrame("build:error", map[string]string{"buildId": buildID, "error": code, "message": message})
	}
	if err != nil {
		return err
	}
	return s.send(ctx, c.ID, frame)
}
