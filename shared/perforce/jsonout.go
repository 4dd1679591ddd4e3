package perforce

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Severities of p4's messages (E_EMPTY, E_INFO, E_WARN, E_FAILED, E_FATAL).
const (
	severityWarn   = 2
	severityFailed = 3
)

// message is an error, warning or information p4 -ztag -Mj prints as a JSON object of its own:
// {"data":"Change 99 unknown.\n","generic":2,"severity":3}. Generic and severity are numbers,
// where every field of a record is a string.
type message struct {
	Text     string
	Severity int
	Generic  int
}

// parseJSONLines parses p4 -ztag -Mj output: one JSON object a line, each either a record (its
// fields strings; a list flattened into depotFile0, depotFile1, ... as in -ztag) or a message.
// A value keeps every character p4 sent, a description's own trailing newline and lines starting
// with "... " among them. A line that is not a JSON object is an error: p4 prints nothing else in
// this mode.
func parseJSONLines(out []byte) ([]map[string]string, []message, error) {
	var (
		recs []map[string]string
		msgs []message
	)
	for i, line := range bytes.Split(out, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var obj map[string]any
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		if err := dec.Decode(&obj); err != nil || obj == nil || dec.More() {
			return nil, nil, fmt.Errorf("output line %d is not a JSON object", i+1)
		}
		if m, ok := asMessage(obj); ok {
			msgs = append(msgs, m)
			continue
		}
		rec := make(map[string]string, len(obj))
		for k, v := range obj {
			switch v := v.(type) {
			case string:
				rec[k] = v
			case json.Number:
				rec[k] = v.String()
			case bool:
				rec[k] = fmt.Sprint(v)
			case nil:
				rec[k] = ""
			}
			// Nested values are not produced by -ztag -Mj; they are left out.
		}
		recs = append(recs, rec)
	}
	return recs, msgs, nil
}

// asMessage reports whether obj is one of p4's messages: a string "data" with numeric "generic"
// and "severity".
func asMessage(obj map[string]any) (message, bool) {
	data, ok1 := obj["data"].(string)
	generic, ok2 := obj["generic"].(json.Number)
	severity, ok3 := obj["severity"].(json.Number)
	if !ok1 || !ok2 || !ok3 {
		return message{}, false
	}
	g, err1 := generic.Int64()
	s, err2 := severity.Int64()
	if err1 != nil || err2 != nil {
		return message{}, false
	}
	return message{Text: strings.TrimRight(data, "\r\n"), Severity: int(s), Generic: int(g)}, true
}
