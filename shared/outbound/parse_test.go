package outbound

import (
	"slices"
	"testing"
)

func TestParseAllow(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		err      bool
	}{
		{in: "", want: ""},
		{in: " 127.0.0.0/8 , ,10.1.2.3/8", want: "127.0.0.0/8,10.0.0.0/8"},
		{in: "fd00::1/8", want: "fd00::/8"},
		{in: "127.0.0.1", err: true},
		{in: "10.0.0.0/8,nope", err: true},
	} {
		allow, err := ParseAllow(tt.in)
		if tt.err {
			if err == nil {
				t.Errorf("ParseAllow(%q) = %v, want an error", tt.in, allow)
			}
			continue
		}
		if err != nil || FormatAllow(allow) != tt.want {
			t.Errorf("ParseAllow(%q) = %v, %v; want %s", tt.in, allow, err, tt.want)
		}
		again, err := ParseAllow(FormatAllow(allow))
		if err != nil || !slices.Equal(again, allow) {
			t.Errorf("ParseAllow(FormatAllow(%v)) = %v, %v", allow, again, err)
		}
	}
}
