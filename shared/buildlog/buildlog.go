// Package buildlog keeps build logs: every line a build printed, with its time, level and
// sequence number (1, 2, 3, ... per build). Lines are written in chunks by one writer per build,
// in order, and read from any sequence number on. On one machine they are files (Files); in AWS
// they are DynamoDB items (package dynamostore). Every implementation passes the contract suite
// in buildlog/logstoretest.
package buildlog

import (
	"errors"
	"unicode/utf8"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Line is a stored log line and its sequence number in the build's log.
type Line struct {
	Seq int64
	kiln.LogLine
}

// MaxLineBytes is the longest message a stored line keeps: a longer one is cut and ends with
// CutMarker, the whole at most MaxLineBytes bytes.
const MaxLineBytes = 16 << 10

// CutMarker ends a line that was cut at MaxLineBytes.
const CutMarker = " [line cut]"

// Cut returns the message cut to at most MaxLineBytes bytes, ending with CutMarker when it was
// longer. It cuts at a UTF-8 character boundary, so a cut line stays valid UTF-8.
func Cut(msg string) string {
	if len(msg) <= MaxLineBytes {
		return msg
	}
	end := MaxLineBytes - len(CutMarker)
	for end > 0 && !utf8.RuneStart(msg[end]) {
		end--
	}
	return msg[:end] + CutMarker
}

// ErrGap is returned by an append whose first sequence number is past the next one of the log:
// lines would be missing in between.
var ErrGap = errors.New("buildlog: the lines would leave a gap in the log")

// CutAll returns the lines with every message cut to MaxLineBytes; the caller's slice is not
// changed.
func CutAll(lines []kiln.LogLine) []kiln.LogLine {
	out, copied := lines, false
	for i, l := range lines {
		if len(l.Message) > MaxLineBytes {
			if !copied {
				out, copied = append([]kiln.LogLine(nil), lines...), true
			}
			out[i].Message = Cut(l.Message)
		}
	}
	return out
}
