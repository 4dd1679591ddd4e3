package manifest

import (
	"cmp"
	"slices"
	"strings"
)

// Change kinds of a Diff.
const (
	Grew     = "grew"
	Shrank   = "shrank"
	Appeared = "appeared"
	Vanished = "vanished"
)

// Change is one file whose size differs between a base and a head manifest. BaseBytes is 0 for a
// file that appeared, Bytes 0 for one that vanished.
type Change struct {
	Path      string
	Kind      string
	BaseBytes int64
	Bytes     int64
}

// Delta is Bytes − BaseBytes.
func (c Change) Delta() int64 { return c.Bytes - c.BaseBytes }

// Diff is what changed from base to head.
type Diff struct {
	// Changes are the files that grew, shrank, appeared or vanished, largest absolute change
	// first, then by path; files of the same size in both are left out.
	Changes []Change
	// BaseBytes and Bytes are the total sizes of base and head; BaseFiles and Files their counts.
	BaseBytes, Bytes int64
	BaseFiles, Files int
}

// Compare returns what changed from base to head (both sorted by path, as Read returns them).
func Compare(base, head []Entry) Diff {
	d := Diff{BaseFiles: len(base), Files: len(head)}
	i, j := 0, 0
	for i < len(base) || j < len(head) {
		var c Change
		switch {
		case j == len(head) || i < len(base) && base[i].Path < head[j].Path:
			c = Change{Path: base[i].Path, Kind: Vanished, BaseBytes: base[i].Size}
			d.BaseBytes += base[i].Size
			i++
		case i == len(base) || head[j].Path < base[i].Path:
			c = Change{Path: head[j].Path, Kind: Appeared, Bytes: head[j].Size}
			d.Bytes += head[j].Size
			j++
		default:
			c = Change{Path: head[j].Path, BaseBytes: base[i].Size, Bytes: head[j].Size}
			d.BaseBytes += base[i].Size
			d.Bytes += head[j].Size
			i, j = i+1, j+1
			switch {
			case c.Bytes > c.BaseBytes:
				c.Kind = Grew
			case c.Bytes < c.BaseBytes:
				c.Kind = Shrank
			default:
				continue
			}
		}
		d.Changes = append(d.Changes, c)
	}
	slices.SortFunc(d.Changes, func(a, b Change) int {
		if n := cmp.Compare(abs(b.Delta()), abs(a.Delta())); n != 0 {
			return n
		}
		return strings.Compare(a.Path, b.Path)
	})
	return d
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
