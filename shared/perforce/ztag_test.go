package perforce

import (
	"reflect"
	"testing"
)

func TestParseZtag(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []map[string]string
	}{
		{"empty", "", nil},
		{"one record", "... userName bob\n... serverAddress 1.2.3.4:1666\n\n",
			[]map[string]string{{"userName": "bob", "serverAddress": "1.2.3.4:1666"}}},
		{"two records", "... depotFile //d/a\n... rev 1\n\n... depotFile //d/b\n... rev 2\n\n",
			[]map[string]string{{"depotFile": "//d/a", "rev": "1"}, {"depotFile": "//d/b", "rev": "2"}}},
		{"no trailing blank", "... change 12",
			[]map[string]string{{"change": "12"}}},
		{"value with spaces", "... desc fix the build now\n",
			[]map[string]string{{"desc": "fix the build now"}}},
		{"empty value", "... desc \n... change 3\n",
			[]map[string]string{{"desc": "", "change": "3"}}},
		{"key without value", "... otherLock\n",
			[]map[string]string{{"otherLock": ""}}},
		{"multi-line value", "... desc line one\nline two\n\nline four\n\n... change 7\n\n",
			// A blank line before "... " always ends a record, even where p4 meant a value's
			// trailing newline (describe's desc): callers read desc from the first record.
			[]map[string]string{{"desc": "line one\nline two\n\nline four"}, {"change": "7"}}},
		{"crlf", "... a 1\r\n... b 2\r\n\r\n... a 3\r\n",
			[]map[string]string{{"a": "1", "b": "2"}, {"a": "3"}}},
		{"stray text before a record", "hello\n... a 1\n",
			[]map[string]string{{"a": "1"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseZtag(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("parseZtag(%q) = %#v, want %#v", tc.in, got, tc.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		in   string
		want error
	}{
		{"Perforce password (P4PASSWD) invalid or unset.\n", ErrAuth},
		{"Your session has expired, please login again.\n", ErrAuth},
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
