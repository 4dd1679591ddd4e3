package manifest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"reflect"
	"testing"
)

func TestWriteRead(t *testing.T) {
	tests := []struct {
		name    string
		entries []Entry
	}{
		{"empty", nil},
		{"files", []Entry{{"Engine/a.ini", 10}, {"Game/Content/Paks/p.pak", 1 << 40}, {"Game/empty", 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, tt.entries); err != nil {
				t.Fatal(err)
			}
			got, err := Read(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.entries) || len(got) > 0 && !reflect.DeepEqual(got, tt.entries) {
				t.Errorf("read %v, wrote %v", got, tt.entries)
			}
		})
	}
}

func TestReadRefuses(t *testing.T) {
	gz := func(s string) []byte {
		var b bytes.Buffer
		z := gzip.NewWriter(&b)
		_, _ = z.Write([]byte(s))
		_ = z.Close()
		return b.Bytes()
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"not gzip", []byte(`[{"path":"a","size":1}]`)},
		{"not JSON", gz("nope")},
		{"unsorted", gz(`[{"path":"b","size":1},{"path":"a","size":1}]`)},
		{"duplicate", gz(`[{"path":"a","size":1},{"path":"a","size":2}]`)},
		{"negative", gz(`[{"path":"a","size":-1}]`)},
		{"empty path", gz(`[{"path":"","size":1}]`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Read(bytes.NewReader(tt.data)); !errors.Is(err, ErrInvalid) {
				t.Errorf("Read = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestKey(t *testing.T) {
	if got := Key("org1/build1.tar.gz"); got != "org1/build1.manifest.json.gz" {
		t.Errorf("Key = %q", got)
	}
}

func TestCompare(t *testing.T) {
	base := []Entry{{"a.txt", 100}, {"b.pak", 5000}, {"c.so", 300}, {"gone.bin", 700}, {"same", 9}}
	head := []Entry{{"a.txt", 50}, {"b.pak", 9000}, {"c.so", 300}, {"new.bin", 20}, {"same", 9}, {"z", 50}}
	d := Compare(base, head)
	want := []Change{
		{Path: "b.pak", Kind: Grew, BaseBytes: 5000, Bytes: 9000},
		{Path: "gone.bin", Kind: Vanished, BaseBytes: 700},
		{Path: "a.txt", Kind: Shrank, BaseBytes: 100, Bytes: 50},
		{Path: "z", Kind: Appeared, Bytes: 50}, // ties with a.txt: by path
		{Path: "new.bin", Kind: Appeared, Bytes: 20},
	}
	if !reflect.DeepEqual(d.Changes, want) {
		t.Errorf("Changes\n got %+v\nwant %+v", d.Changes, want)
	}
	if d.BaseBytes != 6109 || d.Bytes != 9429 || d.BaseFiles != 5 || d.Files != 6 {
		t.Errorf("totals %d→%d bytes, %d→%d files", d.BaseBytes, d.Bytes, d.BaseFiles, d.Files)
	}
	if d := Compare(head, head); len(d.Changes) != 0 {
		t.Errorf("a manifest against itself: %+v", d.Changes)
	}
}
