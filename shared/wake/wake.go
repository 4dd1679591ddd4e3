// Package wake lets producers wake a polling loop at once instead of at its next poll. Signals
// sent while nobody waits collapse into one, so a burst of work costs one extra look.
package wake

import "sync"

// Signal is ready to use as its zero value and safe for concurrent use.
type Signal struct {
	once sync.Once
	ch   chan struct{}
}

func (s *Signal) init() { s.once.Do(func() { s.ch = make(chan struct{}, 1) }) }

// Notify wakes one waiter, or the next one to wait.
func (s *Signal) Notify() {
	s.init()
	select {
	case s.ch <- struct{}{}:
	default:
	}
}

// C is the channel a loop waits on.
func (s *Signal) C() <-chan struct{} {
	s.init()
	return s.ch
}
