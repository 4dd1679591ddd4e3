package perforce

import "strings"

// parseZtag parses p4 -ztag output: records of "... key value" lines separated by blank lines.
// A line that does not start with "... " continues the previous value (multi-line descriptions),
// and so does a blank line followed by such a line. Values lose their trailing newlines. A
// description holding a line that itself starts with "... " cannot be told from a field: -ztag
// has no escaping.
func parseZtag(out string) []map[string]string {
	var (
		recs []map[string]string
		cur  map[string]string
		last string
	)
	lines := strings.Split(strings.ReplaceAll(out, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case strings.HasPrefix(line, "... "):
			key, val, _ := strings.Cut(line[4:], " ")
			if key == "" {
				continue
			}
			if cur == nil {
				cur = map[string]string{}
				recs = append(recs, cur)
			}
			cur[key] = val
			last = key
		case line == "":
			// A blank line ends the record unless more continuation text follows.
			j := i + 1
			for j < len(lines) && lines[j] == "" {
				j++
			}
			if cur != nil && last != "" && j < len(lines) && !strings.HasPrefix(lines[j], "... ") {
				cur[last] += strings.Repeat("\n", j-i)
				i = j - 1
				continue
			}
			cur, last = nil, ""
		default:
			if cur != nil && last != "" {
				cur[last] += "\n" + line
			}
		}
	}
	for _, r := range recs {
		for k, v := range r {
			r[k] = strings.TrimRight(v, "\n")
		}
	}
	return recs
}
