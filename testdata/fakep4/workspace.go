package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// depotSyntax turns a path in client syntax (//<client>/rest) into the depot path it maps to
// (<stream>/rest) when client is the -c client; other paths are returned as they are.
func depotSyntax(stateFile, client, p string) string {
	if client == "" {
		return p
	}
	rest, ok := strings.CutPrefix(p, "//"+client+"/")
	if !ok {
		return p
	}
	c, ok := loadClient(stateFile, client)
	if !ok || c.Stream == "" {
		return p
	}
	return c.Stream + "/" + rest
}

// clientSpec is a saved client workspace with its have list (depot file -> revision).
type clientSpec struct {
	Name   string         `json:"name"`
	Root   string         `json:"root"`
	Stream string         `json:"stream"`
	Have   map[string]int `json:"have"`
}

func clientFile(stateFile, name string) string {
	return filepath.Join(stateFile+".clients", name+".json")
}

func loadClient(stateFile, name string) (*clientSpec, bool) {
	b, err := os.ReadFile(clientFile(stateFile, name))
	if err != nil {
		return nil, false
	}
	var c clientSpec
	if json.Unmarshal(b, &c) != nil {
		return nil, false
	}
	return &c, true
}

// storeClient keeps a client spec as a server does, for every client of the server: the build
// hosts of one test run as several build uids, so the files are everyone's (the fake is a test
// server on a private temporary directory).
func storeClient(stateFile string, c *clientSpec) error {
	dir := stateFile + ".clients"
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	_ = os.Chmod(dir, 0o777) // the umask
	b, _ := json.Marshal(c)
	path := clientFile(stateFile, c.Name)
	if err := os.WriteFile(path, b, 0o666); err != nil {
		return err
	}
	_ = os.Chmod(path, 0o666) // fails, harmlessly, for a file another uid made: it is 0666 already
	return nil
}

// underAny reports whether the depot holds files under dir (at the latest change).
func underAny(st state, dir string) bool {
	for f := range filesAt(st, latest(st)) {
		if strings.HasPrefix(f, dir+"/") {
			return true
		}
	}
	return false
}

// saveClient implements client -i: a client spec form on stdin ("Field:\tvalue" lines).
func saveClient(st state, stateFile string) int {
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		return fail("fakep4: read spec: %v", err)
	}
	spec := map[string]string{}
	last := ""
	for _, line := range strings.Split(string(raw), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '\t' || line[0] == ' ' {
			// A field's value on the lines below it (View, Description).
			if last != "" {
				spec[last] = strings.TrimSpace(spec[last] + " " + strings.TrimSpace(line))
			}
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if ok {
			spec[k], last = strings.TrimSpace(v), k
		}
	}
	name, root, stream := spec["Client"], spec["Root"], spec["Stream"]
	classic := false
	if view := spec["View"]; view != "" {
		// A classic client's own view, one line: //depot/Game/... //<client>/...
		f := strings.Fields(view)
		left, ok := strings.CutSuffix(f[0], "/...")
		if stream != "" || len(f) != 2 || !ok || f[1] != "//"+spec["Client"]+"/..." {
			return fail("Error in client specification.\nfakep4: View must be one line <depot dir>/... //<client>/..., without Stream.")
		}
		if !underAny(st, left) {
			return fail("Error in client specification.\nMapping '%s/...' is not under any depot.", left)
		}
		stream, classic = left, true
	}
	switch {
	case name == "":
		return fail("Error in client specification.\nMissing required field 'Client'.")
	case !filepath.IsAbs(root):
		return fail("Error in client specification.\nMissing required field 'Root'.")
	case stream != "" && !classic && !slices.Contains(st.Streams, stream):
		return fail("Stream '%s' doesn't exist.", stream)
	}
	c, ok := loadClient(stateFile, name)
	if ok && c.Root == root && c.Stream == stream {
		fmt.Printf("Client %s not changed.\n", name)
		return 0
	}
	if !ok {
		c = &clientSpec{Name: name, Have: map[string]int{}}
	}
	c.Root, c.Stream = root, stream
	if err := storeClient(stateFile, c); err != nil {
		return fail("fakep4: %v", err)
	}
	fmt.Printf("Client %s saved.\n", name)
	return 0
}

// syncClient implements sync [-f] <stream>/...[@change|#head]: the client's root brought to the
// depot at that change, transferring only files whose revision differs from the have list (with
// -f, every file). Like a real server it trusts the have list: files removed from the root behind
// its back are not noticed.
func syncClient(st state, stateFile, name string, args []string) int {
	c, ok := loadClient(stateFile, name)
	if name == "" || !ok {
		return fail("Client '%s' unknown - use 'client' command to create it.", name)
	}
	if len(args) == 0 {
		return fail("fakep4: sync needs a file argument")
	}
	force := slices.Contains(args[:len(args)-1], "-f")
	arg := args[len(args)-1]
	pat, at := arg, latest(st)
	if i := strings.LastIndexAny(arg, "@#"); i > 0 {
		pat = arg[:i]
		if rev := arg[i+1:]; arg[i] == '@' {
			n, err := strconv.Atoi(rev)
			if err != nil || n <= 0 {
				return fail("Invalid changelist/client/label/date '@%s'.", rev)
			}
			if n > latest(st) {
				return fail("Change %d unknown.", n)
			}
			at = n
		} else if rev != "head" {
			return fail("fakep4: only #head")
		}
	}
	pat = depotSyntax(stateFile, name, pat)
	if c.Stream == "" || !strings.HasPrefix(pat, c.Stream+"/") {
		return fail("%s - file(s) not in client view.", pat)
	}
	want := map[string]fileRev{}
	for f, fr := range filesAt(st, at) {
		if match(pat, f) {
			want[f] = fr
		}
	}
	root := c.Root
	if st.SyncRoot != "" {
		root = st.SyncRoot
	}
	// The server names each local path; it is not cleaned, so a ".." in a depot path reaches
	// the client as it is.
	local := func(f string) string {
		return strings.TrimRight(root, "/") + "/" + strings.TrimPrefix(f, c.Stream+"/")
	}
	changed, refused := 0, 0
	for _, f := range sortedKeys(c.Have) {
		if _, ok := want[f]; !ok && match(pat, f) {
			if msg := clientPathError(local(f)); msg != "" {
				fmt.Fprintln(os.Stderr, msg)
				refused++
				continue
			}
			os.Remove(local(f))
			delete(c.Have, f)
			fmt.Printf("%s#none - deleted as %s\n", f, local(f))
			changed++
		}
	}
	files := make([]string, 0, len(want))
	for f := range want {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		fr := want[f]
		have, had := c.Have[f]
		if had && have == fr.Rev && !force {
			continue
		}
		if msg := clientPathError(local(f)); msg != "" {
			fmt.Fprintln(os.Stderr, msg)
			refused++
			continue
		}
		if err := os.MkdirAll(filepath.Dir(local(f)), 0o755); err != nil {
			return fail("fakep4: %v", err)
		}
		if err := os.WriteFile(local(f), []byte(fr.Content), 0o644); err != nil {
			return fail("fakep4: %v", err)
		}
		c.Have[f] = fr.Rev
		verb := "added as"
		if had {
			verb = "updating"
		}
		fmt.Printf("%s#%d - %s %s\n", f, fr.Rev, verb, local(f))
		changed++
	}
	if err := storeClient(stateFile, c); err != nil {
		return fail("fakep4: %v", err)
	}
	if refused > 0 {
		return 1
	}
	if changed == 0 {
		fmt.Fprintf(os.Stderr, "%s - file(s) up-to-date.\n", arg)
	}
	return 0
}
