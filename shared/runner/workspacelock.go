package runner

import (
	"context"
	"sync"
)

// workspaceLocks lets one build at a time use a workspace: with several workers, builds of two
// settings of the same project and branch (or stream) would otherwise check out, sync and compile
// in the same directory at once.
type workspaceLocks struct {
	mu   sync.Mutex
	held map[string]chan struct{}
}

// acquire takes the workspace's lock, waiting until ctx ends if another build holds it; waiting
// is called (when not nil) before it waits.
func (l *workspaceLocks) acquire(ctx context.Context, dir string, waiting func()) (release func(), err error) {
	ch := l.slot(dir)
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	default:
	}
	if waiting != nil {
		waiting()
	}
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *workspaceLocks) slot(dir string) chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held == nil {
		l.held = map[string]chan struct{}{}
	}
	ch, ok := l.held[dir]
	if !ok {
		ch = make(chan struct{}, 1)
		l.held[dir] = ch
	}
	return ch
}
