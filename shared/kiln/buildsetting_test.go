package kiln

import "testing"

// TestSetUploadBuildURLKeepsTheHeaderOnlyForTheSameOrigin: the sealed auth header survives a new
// path on the same server and nothing else.
func TestSetUploadBuildURLKeepsTheHeaderOnlyForTheSameOrigin(t *testing.T) {
	tests := []struct {
		from, to string
		keep     bool
	}{
		{"https://deploy.example/upload", "https://deploy.example/upload", true},
		{"https://deploy.example/upload", "https://deploy.example/v2/upload?x=1", true},
		{"https://deploy.example/upload", "HTTPS://Deploy.Example/upload", true},
		{"https://deploy.example/upload", "https://deploy.example:443/upload", true},
		{"http://deploy.example/upload", "http://deploy.example:80/upload", true},
		{"https://deploy.example/upload", "https://deploy.example./upload", true},
		{"https://[2001:db8::1]/upload", "https://[2001:DB8::1]:443/x", true},
		{"https://deploy.example/upload", "http://deploy.example/upload", false},
		{"https://deploy.example/upload", "https://attacker.example/upload", false},
		{"https://deploy.example/upload", "https://deploy.example.attacker.example/upload", false},
		{"https://deploy.example/upload", "https://deploy.example:8443/upload", false},
		{"https://deploy.example:8443/upload", "https://deploy.example/upload", false},
		{"http://deploy.example/upload", "https://deploy.example:80/upload", false},
		{"https://deploy.example/upload", "", false},
		{"", "https://deploy.example/upload", false},
		{"", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.from+" -> "+tt.to, func(t *testing.T) {
			s := BuildSetting{UploadBuildURL: tt.from, UploadBuildAuthHeader: []byte("sealed")}
			s.SetUploadBuildURL(tt.to)
			if s.UploadBuildURL != tt.to {
				t.Fatalf("url %q, want %q", s.UploadBuildURL, tt.to)
			}
			if kept := s.UploadBuildAuthHeader != nil; kept != tt.keep {
				t.Fatalf("header kept %v, want %v", kept, tt.keep)
			}
		})
	}
}
