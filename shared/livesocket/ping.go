package livesocket

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/kilnbuild/kiln/shared/socketio"
)

// recheckEvery is how many pings apart every socket's credential is checked again.
const recheckEvery = 4

// pingLoop pings every socket each interval, as an Engine.IO 4 server does, and closes those
// that did not answer the previous ping within the timeout.
func (s *Server) pingLoop() {
	t := time.NewTicker(s.Pings.Interval)
	defer t.Stop()
	for tick := 1; ; tick++ {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		if tick%recheckEvery == 0 {
			// A token that expired while its socket stayed connected ends here.
			if err := s.Live.RecheckAll(context.Background()); err != nil {
				s.log().Warn("live socket: recheck", "error", err.Error())
			}
		}
		s.mu.Lock()
		socks := make([]*socket, 0, len(s.conns))
		for _, sock := range s.conns {
			socks = append(socks, sock)
		}
		s.mu.Unlock()
		now := time.Now()
		for _, sock := range socks {
			if p := sock.ping.Load(); p != 0 && now.Sub(time.Unix(0, p)) > s.Pings.Timeout {
				sock.end() // no pong: the client is gone
				continue
			}
			if sock.ping.Load() == 0 {
				sock.ping.Store(now.UnixNano())
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = sock.enqueue(ctx, outgoing{frame: socketio.PingFrame})
			cancel()
		}
	}
}

// newID names a socket: a random prefix per process and a counter (unique, and not guessable
// from another process's ids).
func (s *Server) newID() string {
	return s.prefix + strconv.FormatInt(s.nextID.Add(1), 36)
}

func newPrefix() string {
	var b [9]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:]) + "-"
}
