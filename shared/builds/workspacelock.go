package builds

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

// tryAcquire takes the workspace's lock if it is free.
func (l *workspaceLocks) tryAcquire(dir string) (release func(), ok bool) {
	ch := l.slot(dir)
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, true
	default:
		return nil, false
	}
}

// acquire waits for the workspace's lock until ctx ends.
func (l *workspaceLocks) acquire(ctx context.Context, dir string) (release func(), err error) {
	ch := l.slot(dir)
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
