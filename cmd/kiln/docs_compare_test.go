package main

import (
	"fmt"
	"strings"
)

// shellWords splits a command line as a shell would for the docs' commands: on spaces, with
// double or single quotes around words that hold them.
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	var quote rune
	in := false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\n' || r == '\t':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// shapeDiff lists where got lacks what the doc's answer want shows: its keys, array elements,
// and its values where the doc writes them whole.
func shapeDiff(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %v, want an object", orRoot(path), got)}
		}
		var diffs []string
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				diffs = append(diffs, fmt.Sprintf("%s: no %q", orRoot(path), k))
				continue
			}
			diffs = append(diffs, shapeDiff(path+"."+k, wv, gv)...)
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) < len(w) {
			return []string{fmt.Sprintf("%s: %v, want %d elements at least", orRoot(path), got, len(w))}
		}
		var diffs []string
		for i := range w {
			diffs = append(diffs, shapeDiff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return diffs
	case string:
		g, ok := got.(string)
		before, after, elided := strings.Cut(w, "...")
		if !ok || !elided && g != w || elided && (!strings.HasPrefix(g, before) || !strings.HasSuffix(g, after)) {
			return []string{fmt.Sprintf("%s: %#v, the doc says %q", orRoot(path), got, w)}
		}
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return []string{fmt.Sprintf("%s: %v, the doc says %v", orRoot(path), got, want)}
		}
	}
	return nil
}

func orRoot(path string) string {
	if path == "" {
		return "the answer"
	}
	return path
}
