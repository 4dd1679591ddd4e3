package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// usageEntry is one command of the usage text: its line ("kiln builds logs BUILD_ID [--follow]")
// and the lines explaining it.
type usageEntry struct {
	line string
	more []string
}

// words are the command's name: "kiln", then the words up to the first argument or flag.
func (e usageEntry) words() []string {
	var name []string
	for _, w := range strings.Fields(e.line) {
		if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "[") || strings.ToUpper(w) == w {
			break
		}
		name = append(name, w)
	}
	return name
}

// args are the positional arguments the command's line names: the upper-case words that are
// neither optional ([...]) nor a flag's value.
func (e usageEntry) args() []string {
	var args []string
	fields, depth := strings.Fields(e.line), 0
	for i := len(e.words()); i < len(fields); i++ {
		w := fields[i]
		optional := depth > 0 || strings.HasPrefix(w, "[")
		depth += strings.Count(w, "[") - strings.Count(w, "]")
		if optional || strings.HasPrefix(w, "-") || strings.HasPrefix(fields[i-1], "-") || strings.ToUpper(w) != w {
			continue
		}
		args = append(args, w)
	}
	return args
}

// usageEntries are the commands of the usage text, in its order.
func usageEntries() []usageEntry {
	var es []usageEntry
	for _, l := range strings.Split(usage, "\n") {
		switch {
		case strings.HasPrefix(l, "  kiln "):
			line := strings.TrimSpace(l)
			if i := strings.Index(line, "  "); i > 0 { // a description on the same line
				line = line[:i]
			}
			es = append(es, usageEntry{line: line})
		case strings.HasPrefix(l, "    ") && len(es) > 0 && strings.TrimSpace(l) != "":
			es[len(es)-1].more = append(es[len(es)-1].more, strings.TrimSpace(l))
		}
	}
	return es
}

// usageOf is the usage line of the command named name ("kiln builds trigger"), or "".
func usageOf(name string) (usageEntry, bool) {
	for _, e := range usageEntries() {
		if strings.Join(e.words(), " ") == name {
			return e, true
		}
	}
	return usageEntry{}, false
}

// groupHelp prints the commands of kiln GROUP (e.g. builds) and how they find the service.
func groupHelp(w io.Writer, group string) error {
	fmt.Fprintln(w, "Usage:")
	for _, e := range usageEntries() {
		if n := e.words(); len(n) > 2 && n[1] == group {
			fmt.Fprintf(w, "  %s\n", e.line)
			for _, m := range e.more {
				fmt.Fprintf(w, "      %s\n", m)
			}
		}
	}
	fmt.Fprintln(w, "\nKILN_URL and KILN_TOKEN come from the environment, or from kiln login; --json prints JSON;")
	fmt.Fprintf(w, "kiln %s COMMAND --help lists a command's flags; kiln help lists every command.\n", group)
	return nil
}

// commandHelp makes fs's help the command's usage line and its flags.
func commandHelp(fs *flag.FlagSet) {
	fs.Usage = func() {
		if e, ok := usageOf(fs.Name()); ok {
			fmt.Fprintf(fs.Output(), "usage: %s\n", e.line)
			for _, m := range e.more {
				fmt.Fprintf(fs.Output(), "  %s\n", m)
			}
		} else {
			fmt.Fprintf(fs.Output(), "usage: %s\n", fs.Name())
		}
		fmt.Fprintln(fs.Output(), "\nflags:")
		fs.PrintDefaults()
	}
}

// argCountErr says which arguments are missing, or which are too many, with the usage line.
func argCountErr(name string, pos []string, n int) error {
	e, ok := usageOf(name)
	line := name
	if ok {
		line = e.line
	}
	if len(pos) > n {
		extra := pos[n:]
		return usageErr("%s: unexpected argument%s %s (usage: %s)", name, plural(len(extra)), quoted(extra), line)
	}
	var missing []string
	if ok && len(e.args()) == n {
		missing = e.args()[len(pos):]
	} else {
		missing = []string{fmt.Sprintf("%d more argument%s", n-len(pos), plural(n-len(pos)))}
	}
	return usageErr("%s: missing %s (usage: %s)", name, andList(missing), line)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func quoted(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// andList is "A", "A and B" or "A, B and C".
func andList(ss []string) string {
	if len(ss) < 2 {
		return strings.Join(ss, "")
	}
	return strings.Join(ss[:len(ss)-1], ", ") + " and " + ss[len(ss)-1]
}

// unknownCommand is the error for kiln NAME when there is no such command: the closest command,
// when one is close, and where the list is.
func unknownCommand(name string) error {
	msg := fmt.Sprintf("unknown command %q", name)
	if s := closestCommand(name); s != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", s)
	}
	return usageErr("%s\nkiln help lists the commands.", msg)
}

// closestCommand is the command a mistyped name most likely meant: a command of a group given
// without it ("trigger": "kiln builds trigger"), or the one top-level command within two edits.
func closestCommand(name string) string {
	top := map[string]bool{"help": true, "version": true}
	var sub []string
	for _, e := range usageEntries() {
		n := e.words()
		if len(n) > 1 {
			top[n[1]] = true
		}
		if len(n) > 2 && n[2] == name {
			sub = append(sub, strings.Join(n, " "))
		}
	}
	if len(sub) == 1 {
		return sub[0]
	}
	best, bestD, ties := "", 3, 0
	for t := range top {
		switch d := editDistance(strings.ToLower(name), t); {
		case d < bestD:
			best, bestD, ties = t, d, 1
		case d == bestD:
			ties++
		}
	}
	if best == "" || ties > 1 || bestD >= len(name) {
		return ""
	}
	return "kiln " + best
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
