package buildsteps

import (
	"regexp"
	"strings"
)

// unrealVerbosity matches Unreal's log format "<Category>: <Verbosity>: <message>", e.g.
// "LogCook: Error: ...", also behind a timestamp ("[2024.01.02-03.04.05:678][  0]LogCook: ...").
var unrealVerbosity = regexp.MustCompile(`(?:^|[\s\]])[A-Za-z][A-Za-z0-9_]*: (Error|Fatal|Warning):`)

// LineLevel classifies a line of engine output (docs/api.md, logLines): error for lines that start
// with "ERROR:" or carry Unreal's Error category ("LogCook: Error: ..."; Fatal counts as an error),
// warn likewise for "WARNING:" / "Warning:", info otherwise.
func LineLevel(line string) Level {
	trimmed := strings.TrimLeft(line, " \t")
	switch {
	case strings.HasPrefix(trimmed, "ERROR:"):
		return LevelError
	case strings.HasPrefix(trimmed, "WARNING:"):
		return LevelWarn
	}
	if m := unrealVerbosity.FindStringSubmatch(line); m != nil {
		if m[1] == "Warning" {
			return LevelWarn
		}
		return LevelError
	}
	return LevelInfo
}

// gitLineLevel classifies a line git wrote to its standard error.
func gitLineLevel(line string) Level {
	switch {
	case strings.HasPrefix(line, "fatal:"), strings.HasPrefix(line, "error:"):
		return LevelError
	case strings.HasPrefix(line, "warning:"):
		return LevelWarn
	}
	return LevelInfo
}
