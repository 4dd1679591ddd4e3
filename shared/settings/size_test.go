package settings

import "testing"

func TestParseSize(t *testing.T) {
	good := map[string]int64{
		"50GiB": 50 << 30, "500MiB": 500 << 20, "500 MiB": 500 << 20, "1048576": 1 << 20, "7B": 7,
		"2KiB": 2048, "1TiB": 1 << 40,
	}
	for in, want := range good {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-5", "5GB", "five", "1.5GiB", "GiB", "99999999999TiB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{50 << 30: "50 GiB", 500 << 20: "500 MiB", 1536: "1536 bytes", 1000: "1000 bytes", 1 << 40: "1 TiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}
