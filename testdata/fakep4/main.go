// Command fakep4 is a TEST FIXTURE, not Perforce: a stand-in for the p4 command-line client that
// kiln's tests (shared/perforce) run instead of a real client and server.
//
// It parses p4's global options (-ztag, -Mj, -p, -u, -c) and the commands kiln uses (info,
// login -s, login -a -p (a password on stdin, see state.Passwords), trust -y|-l, streams, files -e, dirs, print -q, changes -m1 -s submitted,
// describe -s, client -i, sync), reads the server it pretends to be from the JSON file named by
// FAKEP4_STATE (see state) and answers as a real client and server do: with -ztag -Mj one JSON
// object a line, records of string fields and messages ({"data","generic","severity"}); with
// -ztag alone "... key value" records, where a description's own trailing newline leaves a blank
// line before the next field; a real server's error texts and exit codes. Each call appends one
// JSON line to the file named by FAKEP4_LOG (see logLine): its argv, whether P4PASSWD was set,
// the names of its environment variables and the values of the non-secret P4 ones, its uid, so tests can
// check that the ticket never reaches argv and the environment is confined.
//
// Like the real client it honours P4CLIENTPATH: a file the server asks it to write (sync, or a
// hostile server's request during any command, see state.WriteOnEveryCall) outside those
// directories, or its tickets or trust file, or through "..", is refused with the real message.
//
// Client workspaces (client -i) and their have lists live beside the state file, in
// <state>.clients/<name>.json, the way a real server keeps them: sync writes, updates and removes
// files under the client's root and transfers only what changed since the last sync.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// state is the server the fake pretends to be.
type state struct {
	// Port is the -p value a reachable server answers on (e.g. "ssl4:127.0.0.1:1666"); any
	// other -p fails to connect.
	Port        string            `json:"port"`
	Unreachable bool              `json:"unreachable"`
	SSL         bool              `json:"ssl"`
	Fingerprint string            `json:"fingerprint"`
	Users       map[string]string `json:"users"` // user -> valid ticket
	Expired     bool              `json:"expired"`
	// Passwords are the users' passwords: `login -a -p` with the right one on stdin issues a new
	// ticket (it becomes the user's in Users, written back to the state file) and prints it.
	Passwords map[string]string `json:"passwords"`
	// ExpiredTickets are tickets the server says have expired ("Your session has expired").
	ExpiredTickets []string `json:"expiredTickets"`
	// TicketLifetime is the seconds `login -s` says a ticket has left (default 43200).
	TicketLifetime int `json:"ticketLifetime"`
	// Logins counts the logins made, written back to the state file.
	Logins  int               `json:"logins"`
	Streams []string          `json:"streams"`
	Files   map[string]string `json:"files"` // depot file -> content
	Changes []change          `json:"changes"`
	// Hang makes every call start a child `sleep 300`, write its pid to ChildPIDFile and sleep.
	Hang         bool   `json:"hang"`
	ChildPIDFile string `json:"childPidFile"`
	// SyncRoot, when set, is a hostile server's: sync sends every file under this local root
	// instead of the client's own.
	SyncRoot string `json:"syncRoot"`
	// WriteOnEveryCall, when set, is a local path a hostile server asks the client to write
	// during every command but trust.
	WriteOnEveryCall string `json:"writeOnEveryCall"`
}

type change struct {
	Change int    `json:"change"`
	Path   string `json:"path"` // a depot path under which the change submitted files
	Desc   string `json:"desc"`
	// Pending changes are not submitted: changes skips them, describe says so, sync ignores them.
	Pending bool `json:"pending"`
	// Files are the depot files the change added or edited (file -> new content); Deleted the
	// ones it deleted. The state's Files exist from before the first change.
	Files   map[string]string `json:"files"`
	Deleted []string          `json:"deleted"`
}

type logLine struct {
	Argv        []string          `json:"argv"`
	P4PasswdSet bool              `json:"p4passwdSet"`
	EnvNames    []string          `json:"envNames"`
	Env         map[string]string `json:"env"` // P4TICKETS, P4TRUST, P4ENVIRO, P4CONFIG, P4CLIENTPATH, HOME
	UID         int               `json:"uid"` // the user the client ran as
}

func main() { os.Exit(run(os.Args[1:])) }

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	return 1
}

func run(args []string) int {
	writeLog(args)
	var st state
	stateFile := beside("FAKEP4_STATE", ".state.json")
	raw, err := os.ReadFile(stateFile)
	if err != nil {
		return fail("fakep4: FAKEP4_STATE: %v", err)
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return fail("fakep4: state: %v", err)
	}
	var ztag, mj bool
	var port, user, client string
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-ztag":
			ztag = true
			args = args[1:]
		case "-Mj":
			mj = true
			args = args[1:]
		case "-p", "-u", "-c":
			if len(args) < 2 {
				return fail("Missing argument for %s flag.", args[0])
			}
			switch args[0] {
			case "-p":
				port = args[1]
			case "-u":
				user = args[1]
			default:
				client = args[1]
			}
			args = args[2:]
		default:
			return fail("Invalid option: %s.", args[0])
		}
	}
	if len(args) == 0 {
		return fail("fakep4: no command")
	}
	if mj && !ztag {
		return fail("fakep4: -Mj without -ztag prints command output, not records")
	}
	if st.Hang {
		return hang(st)
	}
	addr := port[strings.Index(port, ":")+1:]
	if st.Unreachable || port != st.Port {
		return fail("Perforce client error:\n\tConnect to server failed; check $P4PORT.\n\tTCP connect to %s failed.\n\tconnect: %s: Connection refused", addr, addr)
	}
	cmd, cargs := args[0], args[1:]
	if cmd == "trust" {
		return trust(st, addr, cargs)
	}
	if st.SSL && !trusted(st, addr) {
		return fail("The authenticity of '%s' can't be established,\nthis may be your first attempt to connect to this P4PORT.\nThe fingerprint for the key sent to your client is\n%s\nTo allow connection use the 'p4 trust' command.", addr, st.Fingerprint)
	}
	out := &output{ztag: ztag, json: mj}
	if st.WriteOnEveryCall != "" {
		if refused := clientPathError(st.WriteOnEveryCall); refused != "" {
			out.message(sevFailed, evClient, "%s", refused)
		} else if err := os.WriteFile(st.WriteOnEveryCall, []byte("written by the server\n"), 0o644); err != nil {
			out.message(sevFailed, evClient, "open for write: %s: %v", st.WriteOnEveryCall, err)
		}
	}
	if cmd == "info" {
		out.rec("userName", user, "serverAddress", addr, "serverVersion", "P4D/LINUX26X86_64/2024.1/2596294 (2024/05/06)", "serverLicense", "none")
		return out.flush()
	}
	if cmd == "login" && len(cargs) == 2 && cargs[0] == "-a" && cargs[1] == "-p" {
		return login(st, stateFile, user, out)
	}
	ticket, ok := st.Users[user]
	if !ok || ticket == "" || os.Getenv("P4PASSWD") != ticket {
		return out.fail(sevFailed, evConfig, "Perforce password (P4PASSWD) invalid or unset.")
	}
	if st.Expired || slices.Contains(st.ExpiredTickets, ticket) {
		return out.fail(sevFailed, evConfig, "Your session has expired, please login again.")
	}
	switch cmd {
	case "login":
		if len(cargs) != 1 || cargs[0] != "-s" {
			return fail("fakep4: only login -s and login -a -p")
		}
		lifetime := st.TicketLifetime
		if lifetime == 0 {
			lifetime = 43200
		}
		out.rec("User", user, "TicketExpiration", strconv.Itoa(lifetime))
	case "streams":
		for _, s := range st.Streams {
			if len(cargs) == 0 || match(cargs[len(cargs)-1], s) {
				out.rec("Stream", s, "Type", "mainline", "Name", path.Base(s))
			}
		}
	case "files", "dirs":
		if len(cargs) == 0 {
			return fail("fakep4: missing pattern")
		}
		pat := cargs[len(cargs)-1]
		seen := map[string]bool{}
		head := filesAt(st, latest(st))
		for _, f := range sortedKeys(head) {
			if cmd == "files" && match(pat, f) {
				out.rec("depotFile", f, "rev", "1", "change", "1", "action", "add", "type", "text")
			}
			for d := parent(f); cmd == "dirs" && len(d) > 2; d = parent(d) {
				if match(pat, d) && !seen[d] {
					seen[d] = true
					out.rec("dir", d)
				}
			}
		}
		if len(out.recs) == 0 {
			return out.fail(sevWarn, evEmpty, "%s - no such file(s).", pat)
		}
	case "print":
		if len(cargs) != 2 || cargs[0] != "-q" {
			return fail("fakep4: only print -q <file>")
		}
		c, ok := filesAt(st, latest(st))[cargs[1]]
		if !ok {
			return out.fail(sevWarn, evEmpty, "%s - no such file(s).", cargs[1])
		}
		os.Stdout.WriteString(c.Content)
		return 0
	case "changes":
		pat := depotSyntax(stateFile, client, cargs[len(cargs)-1])
		best := -1
		for i, ch := range st.Changes {
			if !ch.Pending && touches(ch, pat) && (best < 0 || ch.Change > st.Changes[best].Change) {
				best = i
			}
		}
		if best >= 0 {
			// Without -l, changes cuts the description to 31 characters and keeps its newline.
			ch := st.Changes[best]
			desc := ch.Desc + "\n"
			if len(desc) > 31 {
				desc = desc[:31]
			}
			out.rec("change", strconv.Itoa(ch.Change), "time", "1700000000", "user", user, "client", "dev-ws",
				"status", "submitted", "changeType", "public", "path", ch.Path, "desc", desc)
		}
	case "describe":
		n, _ := strconv.Atoi(cargs[len(cargs)-1])
		for _, ch := range st.Changes {
			if ch.Change == n {
				status := "submitted"
				if ch.Pending {
					status = "pending"
				}
				// A real server's order: the description (with its own trailing newline) comes
				// before the status, then the files as depotFile0, action0, ...
				rec := []string{"change", strconv.Itoa(n), "user", user, "client", "dev-ws", "time", "1700000000",
					"desc", ch.Desc + "\n", "status", status, "changeType", "public", "path", ch.Path}
				for i, f := range changedFiles(ch) {
					k := strconv.Itoa(i)
					rec = append(rec, "depotFile"+k, f.name, "action"+k, f.action, "type"+k, "text", "rev"+k, "1")
				}
				out.rec(rec...)
				return out.flush()
			}
		}
		return out.fail(sevFailed, evUnknown, "Change %s unknown.", cargs[len(cargs)-1])
	case "client":
		if len(cargs) != 1 || cargs[0] != "-i" {
			return fail("fakep4: only client -i")
		}
		return saveClient(st, stateFile)
	case "sync":
		return syncClient(st, stateFile, client, cargs)
	default:
		return out.fail(sevFailed, evUsage, "Unknown command.  Try 'p4 help' for info.")
	}
	return out.flush()
}

type changedFile struct{ name, action string }

// changedFiles lists what a change did, sorted by depot path.
func changedFiles(ch change) []changedFile {
	var fs []changedFile
	for _, f := range sortedKeys(ch.Files) {
		fs = append(fs, changedFile{f, "edit"})
	}
	for _, f := range ch.Deleted {
		fs = append(fs, changedFile{f, "delete"})
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].name < fs[j].name })
	return fs
}

func writeLog(args []string) {
	name := beside("FAKEP4_LOG", ".log")
	if name == "" {
		return
	}
	l := logLine{Argv: args, Env: map[string]string{}, UID: os.Getuid()}
	_, l.P4PasswdSet = os.LookupEnv("P4PASSWD")
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		l.EnvNames = append(l.EnvNames, k)
		switch k {
		case "P4TICKETS", "P4TRUST", "P4ENVIRO", "P4CONFIG", "P4CLIENTPATH", "HOME":
			l.Env[k] = v
		}
	}
	sort.Strings(l.EnvNames)
	b, _ := json.Marshal(l)
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	f.Write(append(b, '\n'))
}

func hang(st state) int {
	child := exec.Command("sleep", "300")
	if err := child.Start(); err != nil {
		return fail("fakep4: %v", err)
	}
	os.WriteFile(st.ChildPIDFile, []byte(strconv.Itoa(child.Process.Pid)), 0o600)
	time.Sleep(300 * time.Second)
	return 0
}

// fileRev is a depot file's content and revision number.
type fileRev struct {
	Content string
	Rev     int
}

// filesAt is the depot at changelist n: the state's Files (revision 1) with every submitted
// change up to n applied in order.
func filesAt(st state, n int) map[string]fileRev {
	at := map[string]fileRev{}
	for f, c := range st.Files {
		at[f] = fileRev{Content: c, Rev: 1}
	}
	changes := append([]change(nil), st.Changes...)
	sort.Slice(changes, func(i, j int) bool { return changes[i].Change < changes[j].Change })
	for _, ch := range changes {
		if ch.Pending || ch.Change > n {
			continue
		}
		for f, c := range ch.Files {
			at[f] = fileRev{Content: c, Rev: at[f].Rev + 1}
		}
		for _, f := range ch.Deleted {
			delete(at, f)
		}
	}
	return at
}

// latest is the newest submitted changelist number (0 without any).
func latest(st state) int {
	n := 0
	for _, ch := range st.Changes {
		if !ch.Pending && ch.Change > n {
			n = ch.Change
		}
	}
	return n
}

// touches reports whether a change submitted files matching the pattern.
func touches(ch change, pat string) bool {
	if match(pat, ch.Path) {
		return true
	}
	for f := range ch.Files {
		if match(pat, f) {
			return true
		}
	}
	for _, f := range ch.Deleted {
		if match(pat, f) {
			return true
		}
	}
	return false
}

// trust implements p4 trust -y and -l on the file named by P4TRUST ("<addr> <fingerprint>" lines).
func trust(st state, addr string, args []string) int {
	file := os.Getenv("P4TRUST")
	if !st.SSL {
		return fail("Not an SSL connection.")
	}
	known := readTrust(file)
	switch {
	case len(args) == 1 && args[0] == "-l":
		for _, a := range sortedKeys(known) {
			fmt.Printf("%s %s\n", a, known[a])
		}
		return 0
	case len(args) == 1 && args[0] == "-y":
		if fp, ok := known[addr]; ok {
			if fp != st.Fingerprint {
				return fail("******* WARNING P4PORT IDENTIFICATION HAS CHANGED! *******\nIt is possible that someone is intercepting your connection\nto the Perforce P4PORT '%s'\nIf this is not a scheduled key change, then you should contact\nyour Perforce administrator.\nThe fingerprint for the mismatched key sent to your client is\n%s\nTo allow connection use the 'p4 trust -r -f' command.", addr, st.Fingerprint)
			}
			fmt.Println("Trust already established.")
			return 0
		}
		f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return fail("fakep4: %v", err)
		}
		fmt.Fprintf(f, "%s %s\n", addr, st.Fingerprint)
		f.Close()
		fmt.Printf("The fingerprint of the server of your P4PORT setting\n'%s' (%s) is not known.\nThat fingerprint is %s\nAdded trust for P4PORT '%s' (%s)\n", addr, addr, st.Fingerprint, addr, addr)
		return 0
	}
	return fail("fakep4: only trust -y or trust -l")
}

func readTrust(file string) map[string]string {
	m := map[string]string{}
	b, _ := os.ReadFile(file)
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			m[f[0]] = f[1]
		}
	}
	return m
}

func trusted(st state, addr string) bool {
	return readTrust(os.Getenv("P4TRUST"))[addr] == st.Fingerprint
}

// match is a small version of p4 wildcards: "..." matches anything, "*" anything but '/'.
func match(pat, s string) bool {
	if pat == "" {
		return s == ""
	}
	if strings.HasPrefix(pat, "...") {
		for i := 0; i <= len(s); i++ {
			if match(pat[3:], s[i:]) {
				return true
			}
		}
		return false
	}
	if pat[0] == '*' {
		for i := 0; i <= len(s); i++ {
			if match(pat[1:], s[i:]) {
				return true
			}
			if i < len(s) && s[i] == '/' {
				return false
			}
		}
		return false
	}
	return s != "" && s[0] == pat[0] && match(pat[1:], s[1:])
}

// parent is path.Dir for depot paths (path.Dir would turn "//" into "/").
func parent(p string) string { return p[:max(strings.LastIndexByte(p, '/'), 0)] }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// beside names a fixture file: the environment variable when set, else the executable's own path
// plus suffix (so a test that cannot set p4's environment can still steer it).
func beside(env, suffix string) string {
	if v := os.Getenv(env); v != "" {
		return v
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe + suffix
}
