package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// TestConcurrentWritesAllLand: writers in several goroutines, read while they write, lose nothing.
func TestConcurrentWritesAllLand(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				b.Write([]byte("x"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("x", 800) {
		t.Fatalf("String() has %d bytes, want 800", len(got))
	}
}
