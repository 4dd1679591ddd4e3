package httpapi

import "testing"

func TestInUseKeepsEachKeyUnderItsMax(t *testing.T) {
	var u inUse
	a := u.acquire(slot{"build:1", 2}, slot{"token:x", 1})
	if a == nil {
		t.Fatal("first use refused")
	}
	if u.acquire(slot{"build:1", 2}, slot{"token:x", 1}) != nil {
		t.Fatal("a second use of a full key was allowed")
	}
	// The refused attempt took nothing: build:1 still has one use free.
	b := u.acquire(slot{"build:1", 2}, slot{"token:y", 1})
	if b == nil {
		t.Fatal("a use of a key with room was refused")
	}
	if u.acquire(slot{"build:1", 2}, slot{"token:z", 1}) != nil {
		t.Fatal("build:1 went past its max")
	}
	a()
	a() // releasing twice gives back one use only
	if c := u.acquire(slot{"build:1", 2}, slot{"token:x", 1}); c == nil {
		t.Fatal("a released use was not given back")
	}
	if u.acquire(slot{"build:1", 2}) != nil {
		t.Fatal("a double release gave back two uses")
	}
}
