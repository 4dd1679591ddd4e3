package diagnostics

import (
	"regexp"
	"strconv"
	"strings"
)

// The shapes of a diagnostic line. A path may hold spaces and, on Windows, a drive's colon.
var (
	// clang/gcc: "path:line:col: error: msg", "path:line: warning: msg", "fatal error".
	clangRe = regexp.MustCompile(`^\s*((?:[A-Za-z]:[\\/])?[^:()]+?):(\d+):(?:(\d+):)?\s*(fatal error|error|warning):\s*(.+?)\s*$`)
	// MSVC: "path(line): error C2065: msg", "path(line,col): warning C4996: msg".
	msvcRe = regexp.MustCompile(`^\s*((?:[A-Za-z]:[\\/])?[^:()]+?)\((\d+)(?:,(\d+))?\)\s*:\s*(fatal error|error|warning)\s+([A-Z]+\d+)\s*:\s*(.+?)\s*$`)
	// MSVC-style without a code, as Unreal prints in its own log lines: "path(line): msg".
	placeRe = regexp.MustCompile(`^\s*((?:[A-Za-z]:[\\/])?[^:()]+?)\((\d+)(?:,(\d+))?\)\s*:\s*(.+?)\s*$`)
	// Unreal: "[2024.01.01-12.00.00:000][  0]LogCompile: Error: msg", LogCook, Warning.
	unrealRe = regexp.MustCompile(`^\s*(?:\[[^\]]*\])*\s*(?:LogCompile|LogCook)\s*:\s*(Error|Warning)\s*:\s*(.+?)\s*$`)
)

// parseLine reads one diagnostic from a log line, if it holds one.
func parseLine(line string) (raw, bool) {
	if len(line) > maxParsedLine || !strings.Contains(line, "rror") && !strings.Contains(line, "arning") {
		return raw{}, false // the cheap test first: most lines are neither
	}
	if m := unrealRe.FindStringSubmatch(line); m != nil {
		return parseUnreal(severityOf(m[1]), m[2]), true
	}
	if m := msvcRe.FindStringSubmatch(line); m != nil {
		return raw{path: m[1], line: atoi(m[2]), column: atoi(m[3]), severity: severityOf(m[4]), message: m[5] + ": " + m[6]}, true
	}
	if m := clangRe.FindStringSubmatch(line); m != nil {
		return raw{path: m[1], line: atoi(m[2]), column: atoi(m[3]), severity: severityOf(m[4]), message: m[5]}, true
	}
	return raw{}, false
}

// maxParsedLine is the longest line read for diagnostics; longer ones are data, not messages.
const maxParsedLine = 4096

// parseUnreal reads the message of a LogCompile or LogCook line, with its file when it names
// one.
func parseUnreal(sev Severity, msg string) raw {
	if m := msvcRe.FindStringSubmatch(msg); m != nil {
		return raw{path: m[1], line: atoi(m[2]), column: atoi(m[3]), severity: sev, message: m[5] + ": " + m[6]}
	}
	if m := clangRe.FindStringSubmatch(msg); m != nil {
		return raw{path: m[1], line: atoi(m[2]), column: atoi(m[3]), severity: sev, message: m[5]}
	}
	if m := placeRe.FindStringSubmatch(msg); m != nil && looksLikeFile(m[1]) {
		return raw{path: m[1], line: atoi(m[2]), column: atoi(m[3]), severity: sev, message: m[4]}
	}
	return raw{severity: sev, message: msg}
}

// looksLikeFile tells a file ("Source/Game.cpp") from other words before a parenthesis.
func looksLikeFile(p string) bool {
	p = slashes(p)
	base := p[strings.LastIndex(p, "/")+1:]
	return strings.Contains(p, "/") && strings.Contains(base, ".") && !strings.ContainsAny(base, " \t")
}

func severityOf(s string) Severity {
	if strings.EqualFold(s, "warning") {
		return Warning
	}
	return Error // error, fatal error, Error
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func itoa(n int) string { return strconv.Itoa(n) }
