// Package diagnostics finds compiler and cook errors and warnings in a build's log: clang/gcc
// ("path:line:col: error: msg"), MSVC ("path(line): error C2065: msg", "path(line,col): warning
// C4996: msg") and Unreal's LogCompile/LogCook lines ("LogCompile: Error: path(12): msg",
// "LogCook: Warning: msg"). It is pure: lines go in one at a time (a 200,000-line log is never
// held), diagnostics come out with paths relative to the repository root.
//
// Paths. A build runs in a workspace whose absolute path differs from host to host; the
// collector learns the checkout directory from the first absolute path in the log that ends
// with the .uproject's path in the repository (UAT prints it: "-project=<abs>/Game.uproject",
// "Setting up ProjectParams for <abs>/Game.uproject"), and makes paths under it relative.
// Without that line, an absolute path through the .uproject's directory is cut there. A clean
// relative path is taken as relative to the repository root. Any other path (the engine, the
// SDK, "../" out of the repository) is outside the repository: its errors are put on the
// .uproject, line 1, with the path in the message, so a failure is never hidden; its warnings
// are skipped (engine and SDK headers warn about what the studio cannot change) and counted.
// A diagnostic without a file (a cook error about an asset) is put on the .uproject too.
package diagnostics

import (
	"path"
	"strings"
)

// Severity is an error or a warning.
type Severity string

// The severities.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Diagnostic is one error or warning, placed in the repository.
type Diagnostic struct {
	// Path is relative to the repository root, with forward slashes.
	Path     string
	Line     int // 1 when the log names no line
	Column   int // 0 when the log names none
	Severity Severity
	// Message is the compiler's message (with its code, "C2065: ..."), or, for a diagnostic
	// moved onto the .uproject, prefixed with where it was ("Engine/Foo.h(3): ...").
	Message string
}

// DefaultMax is how many diagnostics a collector keeps by default.
const DefaultMax = 500

// Collector gathers the diagnostics of one log. The zero value is not usable: use New.
type Collector struct {
	uproject string // the .uproject's path in the repository, forward slashes
	max      int

	root  string // the checkout directory, once learnt ("" before)
	seen  map[raw]bool
	found []raw // kept, in log order
	// errors and warnings count every distinct diagnostic kept or dropped.
	errors, warnings int
	dropped          int
}

// raw is a diagnostic as the log says it, before its path is placed.
type raw struct {
	path     string // as printed, "" for none
	line     int
	column   int
	severity Severity
	message  string
}

// Result is what a log held.
type Result struct {
	// Diagnostics are errors first, then warnings, each in log order, at most the collector's max.
	Diagnostics []Diagnostic
	// Errors and Warnings count the distinct ones found (kept, dropped or skipped).
	Errors, Warnings int
	// Dropped counts those past the collector's max (warnings make way for errors).
	Dropped int
	// Skipped counts the warnings outside the repository.
	Skipped int
}

// New returns a collector for the log of a build of the .uproject at uprojectPath (relative to
// the repository root), keeping at most max diagnostics (DefaultMax when max <= 0).
func New(uprojectPath string, max int) *Collector {
	if max <= 0 {
		max = DefaultMax
	}
	return &Collector{uproject: path.Clean(slashes(uprojectPath)), max: max, seen: map[raw]bool{}}
}

// Add reads one log line.
func (c *Collector) Add(line string) {
	if c.root == "" {
		c.learnRoot(line)
	}
	d, ok := parseLine(line)
	if !ok || c.seen[d] {
		return
	}
	if d.severity == Error {
		c.errors++
	} else {
		c.warnings++
	}
	if len(c.found) >= c.max {
		if d.severity == Warning || !c.dropLastWarning() {
			c.dropped++
			return
		}
	}
	c.seen[d] = true
	c.found = append(c.found, d)
}

// dropLastWarning makes room for an error, reporting whether there was a warning to drop.
func (c *Collector) dropLastWarning() bool {
	for i := len(c.found) - 1; i >= 0; i-- {
		if c.found[i].severity == Warning {
			delete(c.seen, c.found[i])
			c.found = append(c.found[:i], c.found[i+1:]...)
			c.dropped++
			return true
		}
	}
	return false
}

// Result places the diagnostics found so far in the repository.
func (c *Collector) Result() Result {
	r := Result{Errors: c.errors, Warnings: c.warnings, Dropped: c.dropped}
	var errs, warns []Diagnostic
	placed := map[Diagnostic]bool{}
	for _, d := range c.found {
		out, ok := c.place(d)
		if !ok {
			r.Skipped++
			continue
		}
		if placed[out] {
			continue // two spellings of one path
		}
		placed[out] = true
		if out.Severity == Error {
			errs = append(errs, out)
		} else {
			warns = append(warns, out)
		}
	}
	r.Diagnostics = append(errs, warns...)
	return r
}

// place puts a diagnostic in the repository, or reports false for a warning outside it.
func (c *Collector) place(d raw) (Diagnostic, bool) {
	out := Diagnostic{Path: c.uproject, Line: 1, Severity: d.severity, Message: d.message}
	if d.path == "" {
		return out, true
	}
	if rel, ok := c.relative(d.path); ok {
		out.Path, out.Line, out.Column = rel, max(d.line, 1), d.column
		return out, true
	}
	if d.severity == Warning {
		return Diagnostic{}, false
	}
	out.Message = where(d) + ": " + d.message
	return out, true
}

// where is a diagnostic's place as the log printed it.
func where(d raw) string {
	s := d.path
	if d.line > 0 {
		s += "(" + itoa(d.line)
		if d.column > 0 {
			s += "," + itoa(d.column)
		}
		s += ")"
	}
	return s
}

// relative makes a printed path relative to the repository root.
func (c *Collector) relative(p string) (string, bool) {
	p = slashes(p)
	if !isAbs(p) {
		p = path.Clean(p)
		return p, p != "." && p != ".." && !strings.HasPrefix(p, "../") && !strings.HasPrefix(p, "/")
	}
	p = path.Clean(p)
	if c.root != "" {
		if rest, ok := cutPrefixFold(p, c.root+"/", hasDrive(p)); ok {
			return cleanRel(rest)
		}
		return "", false
	}
	if dir := path.Dir(c.uproject); dir != "." {
		if i := strings.LastIndex(p, "/"+dir+"/"); i >= 0 {
			return cleanRel(p[i+1:])
		}
	}
	return "", false
}

func cleanRel(p string) (string, bool) {
	p = path.Clean(p)
	return p, p != "." && !strings.HasPrefix(p, "../")
}

// learnRoot learns the checkout directory from an absolute path to the .uproject in line.
func (c *Collector) learnRoot(line string) {
	l := slashes(line)
	suffix := "/" + c.uproject
	for from := 0; ; {
		i := indexFold(l[from:], suffix)
		if i < 0 {
			return
		}
		end := from + i
		from = end + len(suffix)
		if from < len(l) && !strings.ContainsRune(" \t\"'", rune(l[from])) {
			continue // a longer name
		}
		start := strings.LastIndexAny(l[:end], " \t\"'=") + 1
		root := path.Clean(l[start:end])
		if isAbs(root) && root != "/" {
			c.root = root
			return
		}
	}
}

func slashes(p string) string { return strings.ReplaceAll(p, `\`, "/") }

// isAbs reports whether a forward-slash path is absolute on Unix or Windows ("C:/...").
func isAbs(p string) bool { return strings.HasPrefix(p, "/") || hasDrive(p) }

func hasDrive(p string) bool {
	return len(p) >= 3 && p[1] == ':' && p[2] == '/' && (p[0]|0x20) >= 'a' && (p[0]|0x20) <= 'z'
}

// cutPrefixFold cuts prefix off s, ignoring case when fold is set (Windows paths).
func cutPrefixFold(s, prefix string, fold bool) (string, bool) {
	if len(s) < len(prefix) {
		return "", false
	}
	if s[:len(prefix)] == prefix || (fold && strings.EqualFold(s[:len(prefix)], prefix)) {
		return s[len(prefix):], true
	}
	return "", false
}

func indexFold(s, sub string) int {
	if i := strings.Index(s, sub); i >= 0 {
		return i
	}
	ls, lsub := strings.ToLower(s), strings.ToLower(sub)
	if len(ls) != len(s) || len(lsub) != len(sub) {
		return -1 // lower-casing moved the bytes: no offsets to trust
	}
	return strings.Index(ls, lsub)
}
