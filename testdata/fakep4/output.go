package main

import (
	"encoding/json"
	"fmt"
	"os"
)

// Message severities and generic codes, as the real client prints them with -Mj.
const (
	sevWarn   = 2
	sevFailed = 3

	evUsage   = 0x01
	evUnknown = 0x02
	evEmpty   = 0x11
	evClient  = 0x22
	evConfig  = 0x24
)

// output is one command's answer: records and messages in the mode the global options asked for.
type output struct {
	ztag, json bool
	recs       [][]string
	failed     bool
}

func (o *output) rec(kv ...string) { o.recs = append(o.recs, kv) }

// message prints one of p4's messages: with -Mj the JSON object a real client prints on stdout
// ({"data":"text\n","generic":N,"severity":N}), otherwise the text on stderr. An error
// (severity 3 or more) makes the command exit 1.
func (o *output) message(severity, generic int, format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	if o.json {
		b, _ := json.Marshal(map[string]any{"data": text + "\n", "generic": generic, "severity": severity})
		fmt.Printf("%s\n", b)
	} else {
		fmt.Fprintln(os.Stderr, text)
	}
	if severity >= sevFailed || !o.json {
		o.failed = true
	}
}

// fail prints a message and ends the command: exit 1, or 0 for a warning in -Mj mode (a warning
// is not a failure of the command; the message says what happened).
func (o *output) fail(severity, generic int, format string, args ...any) int {
	o.message(severity, generic, format, args...)
	if o.failed {
		return 1
	}
	return 0
}

// flush prints the records: with -Mj one JSON object a line (keys sorted, as p4 prints them),
// with -ztag "... key value" lines and a blank line after each record, else the values.
func (o *output) flush() int {
	for _, r := range o.recs {
		if o.json {
			m := map[string]string{}
			for i := 0; i+1 < len(r); i += 2 {
				m[r[i]] = r[i+1]
			}
			b, _ := json.Marshal(m)
			fmt.Printf("%s\n", b)
			continue
		}
		for i := 0; i+1 < len(r); i += 2 {
			if o.ztag {
				fmt.Printf("... %s %s\n", r[i], r[i+1])
			} else {
				fmt.Printf("%s\n", r[i+1])
			}
		}
		if o.ztag {
			fmt.Println()
		}
	}
	if o.failed {
		return 1
	}
	return 0
}
