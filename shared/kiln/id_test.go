package kiln

import (
	"sort"
	"testing"
	"time"
)

func TestIDsAre24URLSafeCharactersSortedByCreation(t *testing.T) {
	var g IDGenerator
	start := time.Date(2026, 11, 21, 10, 4, 5, 0, time.UTC)
	var ids []string
	for i := 0; i < 2000; i++ {
		// Many ids share a millisecond; time also steps forward.
		ids = append(ids, g.New(start.Add(time.Duration(i/100)*time.Millisecond)))
	}
	for i, id := range ids {
		if len(id) != IDLength || !ValidID(id) || id[0] != 'k' {
			t.Fatalf("id %q is not 24 URL-safe characters", id)
		}
		if i > 0 && ids[i-1] >= id {
			t.Fatalf("ids out of creation order: %q then %q", ids[i-1], id)
		}
	}
	if !sort.StringsAreSorted(ids) {
		t.Fatal("ids do not sort")
	}
	later := g.New(start.Add(time.Hour))
	earlierGen := (&IDGenerator{}).New(start.Add(time.Minute))
	if !(earlierGen < later) {
		t.Errorf("an id from a later time sorts first: %q >= %q", earlierGen, later)
	}
}

func TestValidID(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{NewID(), true},
		{"", false},
		{"short", false},
		{"abcdefghijklmnopqrstuvw!", false},
		{"abcdefghijklmnopqrstuvwxy", false},
		{"../../etc/passwd/aaaaaaa", false},
		{"-_0123456789ABCdefghijkl", true},
	}
	for _, tt := range tests {
		if got := ValidID(tt.in); got != tt.want {
			t.Errorf("ValidID(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestIDTime(t *testing.T) {
	at := time.Date(2026, 11, 26, 4, 40, 1, 123e6, time.UTC)
	var g IDGenerator
	if got, ok := IDTime(g.New(at)); !ok || !got.Equal(at) {
		t.Fatalf("IDTime = %v %v, want %v", got, ok, at)
	}
	if _, ok := IDTime("not an id"); ok {
		t.Fatal("IDTime of a non-id reported a time")
	}
}
