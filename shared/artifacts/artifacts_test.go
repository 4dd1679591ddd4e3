package artifacts

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateKey(t *testing.T) {
	tests := []struct {
		key string
		ok  bool
	}{
		{"k123/b456.tar.gz", true},
		{"orgs/k1/builds/b2.tar.gz", true},
		{"a.tar.gz", true},
		{"A-Z_a-z.0-9", true},
		{"k/a..b", true}, // dots inside a segment are fine
		{strings.Repeat("a", MaxKeyLen), true},
		{strings.Repeat("a", MaxKeyLen+1), false},
		{"", false},
		{"/k/b", false},
		{"k/b/", false},
		{"k//b", false},
		{"..", false},
		{"k/../b", false},
		{"./k", false},
		{"k/.partial-1", false},
		{`k\b`, false},
		{"k b", false},
		{"k/ü", false},
		{"k%2F..", false},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			err := ValidateKey(tt.key)
			if tt.ok && err != nil {
				t.Errorf("ValidateKey(%q) = %v, want nil", tt.key, err)
			}
			if !tt.ok && !errors.Is(err, ErrInvalidKey) {
				t.Errorf("ValidateKey(%q) = %v, want ErrInvalidKey", tt.key, err)
			}
		})
	}
}

func TestValidatePrefix(t *testing.T) {
	tests := []struct {
		prefix string
		ok     bool
	}{
		{"", true},
		{"caches/", true},
		{"caches/k1/", true},
		{"caches/k1/b", true},
		{"caches/k1/.", false}, // no key segment starts with a dot
		{"/caches/", false},
		{"caches//", false},
		{"caches/../", false},
		{"caches/k 1/", false},
		{strings.Repeat("a", MaxKeyLen), false},
	}
	for _, tc := range tests {
		err := ValidatePrefix(tc.prefix)
		if (err == nil) != tc.ok {
			t.Errorf("ValidatePrefix(%q) = %v, want ok=%v", tc.prefix, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidKey) {
			t.Errorf("ValidatePrefix(%q) = %v, not ErrInvalidKey", tc.prefix, err)
		}
	}
}
