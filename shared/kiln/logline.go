package kiln

import "time"

// LogLevel is the level of a build log line.
type LogLevel string

const (
	LevelInfo  LogLevel = "info"
	LevelWarn  LogLevel = "warn"
	LevelError LogLevel = "error"
)

// LogLine is one line of a build's log.
type LogLine struct {
	Time    time.Time
	Level   LogLevel
	Message string
}

// MaxDetailLogLines is how many of the most recent lines a build detail carries.
const MaxDetailLogLines = 200
