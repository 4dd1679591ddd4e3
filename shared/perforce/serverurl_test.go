package perforce

import (
	"errors"
	"testing"
)

func TestParseServerURL(t *testing.T) {
	good := []struct {
		in   string
		want ServerURL
	}{
		{"ssl:perforce.example.com:1666", ServerURL{"ssl", "perforce.example.com", 1666}},
		{"ssl4:p4.example.com:1", ServerURL{"ssl4", "p4.example.com", 1}},
		{"ssl6:p4.example.com:65535", ServerURL{"ssl6", "p4.example.com", 65535}},
		{"ssl46:P4.Example.COM:1666", ServerURL{"ssl46", "p4.example.com", 1666}},
		{"ssl64:p4-a.example.com.:1666", ServerURL{"ssl64", "p4-a.example.com.", 1666}},
		{"tcp:10.0.0.5:1666", ServerURL{"tcp", "10.0.0.5", 1666}},
		{"ssl6:[2001:db8::1]:1666", ServerURL{"ssl6", "2001:db8::1", 1666}},
		{"ssl:[::1]:1666", ServerURL{"ssl", "::1", 1666}},
		{"tcp:localhost:1666", ServerURL{"tcp", "localhost", 1666}},
	}
	for _, tc := range good {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseServerURL(tc.in)
			if err != nil || got != tc.want {
				t.Fatalf("ParseServerURL(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
		})
	}
	bad := []string{
		"",
		"rsh:/bin/sh -c id",
		"rsh:p4d -r /tmp -i",
		"p4.example.com:1666",   // no protocol
		"1666",                  // port only
		"tcp4:p4.example.com:1", // not in the list
		"tcp6:[::1]:1666",
		"SSL:p4.example.com:1666",
		"http://p4.example.com:1666",
		"ssl:p4.example.com",       // no port
		"ssl:p4.example.com:",      // empty port
		"ssl:p4.example.com:0",     // out of range
		"ssl:p4.example.com:65536", // out of range
		"ssl:p4.example.com:+1666",
		"ssl:p4.example.com:16a6",
		"ssl:p4.example.com:001666",
		"ssl::1666", // empty host
		"ssl:-oProxyCommand=x:1666",
		"-ssl:p4.example.com:1666",
		"ssl:p4 .example.com:1666",
		"ssl:p4.example.com:1666 ",
		" ssl:p4.example.com:1666",
		"ssl:p4.example.com:1666\n",
		"ssl:p4.example.com\n:1666",
		"ssl:p4\t.example.com:1666",
		"ssl:p4.example.com:1666\x00",
		"ssl:p4_x.example.com:1666",
		"ssl:p4..example.com:1666",
		"ssl:p4-.example.com:1666",
		"ssl:user@p4.example.com:1666",
		"ssl:p4.example.com/x:1666",
		"ssl:p4.exämple.com:1666",
		"ssl:[::1:1666",
		"ssl:[fe80::1%eth0]:1666",
		"ssl:[10.0.0.1]:1666",
		"ssl4:[::1]:1666",
		"ssl6:10.0.0.1:1666",
		"ssl:::1:1666", // unbracketed IPv6
		"ssl:a:b:1666",
	}
	for _, in := range bad {
		t.Run(in, func(t *testing.T) {
			got, err := ParseServerURL(in)
			if !errors.Is(err, ErrInvalidServerURL) {
				t.Fatalf("ParseServerURL(%q) = %+v, %v; want ErrInvalidServerURL", in, got, err)
			}
		})
	}
}

func TestServerURLString(t *testing.T) {
	for _, s := range []string{"ssl:p4.example.com:1666", "ssl6:[2001:db8::1]:1666", "tcp:10.0.0.1:1"} {
		u, err := ParseServerURL(s)
		if err != nil || u.String() != s {
			t.Errorf("round trip %q: %q, %v", s, u.String(), err)
		}
	}
}
