package diskspace

import "testing"

func TestOf(t *testing.T) {
	s, err := Of(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if s.Total <= 0 || s.Free < 0 || s.Free > s.Total {
		t.Fatalf("space %+v", s)
	}
	if _, err := Of("/no/such/dir"); err == nil {
		t.Fatal("no error for a missing path")
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{512, "512 bytes"}, {2 << 30, "2 GiB"}, {5 << 29, "2.5 GiB"}, {64 << 20, "64 MiB"}, {3 << 40, "3 TiB"},
	} {
		if got := Format(tc.n); got != tc.want {
			t.Errorf("Format(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
