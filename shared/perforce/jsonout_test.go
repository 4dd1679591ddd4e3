package perforce

import (
	"errors"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

// describeLine is p4 -ztag -Mj describe -s as a real server prints it: keys sorted, every field a
// string, the description with its own trailing newline, the files flattened into depotFile0...
const describeLine = `{"action0":"edit","change":"42","changeType":"public","client":"dev-ws",` +
	`"depotFile0":"//game/main/Shooter.uproject","desc":"Bump engine\n\n... status pending\nto 5.3\n",` +
	`"path":"//game/main/...","rev0":"3","status":"submitted","time":"1700000000","type0":"text","user":"bob"}`

func TestParseJSONLines(t *testing.T) {
	tests := []struct {
		name string
		in   string
		recs []map[string]string
		msgs []message
	}{
		{"empty", "", nil, nil},
		{"describe keeps the description whole and the status", describeLine + "\n",
			[]map[string]string{{"action0": "edit", "change": "42", "changeType": "public", "client": "dev-ws",
				"depotFile0": "//game/main/Shooter.uproject", "desc": "Bump engine\n\n... status pending\nto 5.3\n",
				"path": "//game/main/...", "rev0": "3", "status": "submitted", "time": "1700000000", "type0": "text", "user": "bob"}},
			nil},
		{"several records, crlf, blank lines",
			"{\"depotFile\":\"//d/a\",\"rev\":\"1\"}\r\n\n{\"depotFile\":\"//d/b\",\"rev\":\"2\"}\n",
			[]map[string]string{{"depotFile": "//d/a", "rev": "1"}, {"depotFile": "//d/b", "rev": "2"}}, nil},
		{"messages among records",
			`{"clientFile":"/ws/a.txt","depotFile":"//depot/a.txt","isMapped":""}` + "\n" +
				`{"data":"nothere.txt - no such file(s).\n","generic":17,"severity":2}` + "\n" +
				`{"data":"Perforce password (P4PASSWD) invalid or unset.\n","generic":36,"severity":3}` + "\n",
			[]map[string]string{{"clientFile": "/ws/a.txt", "depotFile": "//depot/a.txt", "isMapped": ""}},
			[]message{{Text: "nothere.txt - no such file(s).", Severity: 2, Generic: 17},
				{Text: "Perforce password (P4PASSWD) invalid or unset.", Severity: 3, Generic: 36}}},
		{"string generic and severity are a record's fields",
			`{"data":"x","generic":"17","severity":"2"}`,
			[]map[string]string{{"data": "x", "generic": "17", "severity": "2"}}, nil},
		{"numbers and booleans become strings", `{"change":12,"shelved":true,"x":null}`,
			[]map[string]string{{"change": "12", "shelved": "true", "x": ""}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, msgs, err := parseJSONLines([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(recs, tc.recs) || !reflect.DeepEqual(msgs, tc.msgs) {
				t.Fatalf("parseJSONLines = %#v, %#v; want %#v, %#v", recs, msgs, tc.recs, tc.msgs)
			}
		})
	}
}

func TestParseJSONLinesRefusesOtherOutput(t *testing.T) {
	for _, in := range []string{
		"... change 42\n... status submitted\n",
		`{"change":"1"}` + "\nPerforce client error:\n",
		`["change"]`,
		`{"change":"1"} {"change":"2"}`,
		`{"change":"1"`,
	} {
		if _, _, err := parseJSONLines([]byte(in)); err == nil {
			t.Errorf("parseJSONLines(%q): no error", in)
		}
	}
}

func TestMessagesDecideFailure(t *testing.T) {
	exit1 := exec.Command("sh", "-c", "exit 1").Run()
	c := &Client{Ticket: "SECRET"}
	tests := []struct {
		name    string
		res     result
		msgs    []message
		wantErr bool
		kind    error
		text    string
	}{
		{"nothing", result{}, nil, false, nil, ""},
		{"info and unknown warnings pass", result{},
			[]message{{Text: "Client ws saved.", Severity: 1}, {Text: "//x/... - file(s) up-to-date.", Severity: 2, Generic: 17}},
			false, nil, ""},
		{"a known warning is its kind", result{},
			[]message{{Text: "//x/... - no such file(s).", Severity: 2, Generic: 17}}, true, ErrNotFound, "no such file(s)"},
		{"an error fails the call though p4 exits 0", result{},
			[]message{{Text: "Something broke badly.", Severity: 3}}, true, nil, "Something broke badly."},
		{"an auth error", result{exitErr: exit1},
			[]message{{Text: "Perforce password (P4PASSWD) invalid or unset.", Severity: 3, Generic: 36}}, true, ErrAuth, "P4PASSWD"},
		{"a refused local file", result{exitErr: exit1},
			[]message{{Text: "File /etc/x is not inside permitted filesystem path /dev/null/kiln-no-local-files", Severity: 3, Generic: 34}},
			true, ErrOutsideWorkspace, "/etc/x"},
		{"the client's own error on stderr", result{exitErr: exit1, stderr: "Perforce client error:\n\tConnect to server failed; check $P4PORT.\n"},
			nil, true, ErrUnreachable, "Perforce client error:"},
		{"the ticket is redacted", result{}, []message{{Text: "bad ticket SECRET", Severity: 3}}, true, nil, "[redacted]"},
		{"exit code alone", result{exitErr: exit1}, nil, true, nil, "exit code 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := c.failure("files", withMessages(tc.res, tc.msgs))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err == nil {
				return
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.Kind != tc.kind || !strings.Contains(pe.Message, tc.text) {
				t.Fatalf("err = %#v, want kind %v and message with %q", err, tc.kind, tc.text)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Fatalf("ticket in %q", err)
			}
		})
	}
}
