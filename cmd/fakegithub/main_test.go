package main

import "testing"

func TestCheckSetupURL(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"", true},
		{"http://127.0.0.1:8090/integrations/github/callback", true},
		{"https://kiln.example.com/integrations/github/callback?from=app", true},
		{"/integrations/github/callback", false},
		{"127.0.0.1:8090/integrations/github/callback", false},
		{"ftp://127.0.0.1/callback", false},
		{"http:///callback", false},
		{"http://127.0.0.1:8090/callback#top", false},
		{"http://[::1", false},
	} {
		if err := checkSetupURL(tc.url); (err == nil) != tc.ok {
			t.Errorf("checkSetupURL(%q) = %v, want ok %v", tc.url, err, tc.ok)
		}
	}
}
