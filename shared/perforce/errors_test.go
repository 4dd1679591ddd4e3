package perforce

import "testing"

func TestClassify(t *testing.T) {
	tests := []struct {
		in   string
		want error
	}{
		{"Perforce password (P4PASSWD) invalid or unset.\n", ErrAuth},
		{"Your session has expired, please login again.\n", ErrExpired}, // an ErrAuth too
		{"Password invalid.\n", ErrAuth},
		{"User xyz doesn't exist.\n", ErrAuth},
		{"Perforce client error:\n\tConnect to server failed; check $P4PORT.\n", ErrUnreachable},
		{"//depot/x - no such file(s).\n", ErrNotFound},
		{"Path '//nope/...' is not under client's root; depot 'nope' doesn't exist.\n", ErrNotFound},
		{"Change 99 unknown.\n", ErrNotFound},
		{"******* WARNING P4PORT IDENTIFICATION HAS CHANGED! *******\n", ErrTrust},
		{"something else\n", nil},
		{"", nil},
	}
	for _, tc := range tests {
		if got := classify(tc.in); got != tc.want {
			t.Errorf("classify(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
