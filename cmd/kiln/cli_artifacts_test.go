package main

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCLIDownload: kiln artifacts download writes the artifact with the MD5 the API gives;
// resumes with Range a download whose connection was cut and a .part left by an earlier run;
// deletes a download that does not match (exit 1) and never leaves a file under the final name.
func TestCLIDownload(t *testing.T) {
	w := newCLIWorld(t)
	out, _, code, err := runKiln(t, w.env, "builds", "trigger", w.project, w.settings["main"], "--follow", "--json")
	if code != 0 {
		t.Fatalf("trigger: exit %d (%v)", code, err)
	}
	var trig struct{ BuildID string }
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &trig); err != nil || trig.BuildID == "" {
		t.Fatalf("trigger --json printed %q", out)
	}
	id := trig.BuildID
	var link struct {
		SizeBytes   int64
		ChecksumMd5 string
	}
	w.api(t, "GET", "/builds/"+id+"/download", nil, 200, &link)
	if link.SizeBytes < 1000 {
		t.Fatalf("artifact of %d bytes is too small to cut", link.SizeBytes)
	}
	dir := t.TempDir()
	download := func(t *testing.T, name string, args ...string) (string, int, error) {
		t.Helper()
		out, _, code, err := runKiln(t, w.env, append([]string{"artifacts", "download", id, "-o", filepath.Join(dir, name)}, args...)...)
		return out, code, err
	}

	t.Run("whole", func(t *testing.T) {
		out, code, err := download(t, "whole.tar.gz", "--json")
		if code != 0 {
			t.Fatalf("exit %d (%v)", code, err)
		}
		var got struct {
			Path        string
			SizeBytes   int64
			ChecksumMd5 string
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil || got.ChecksumMd5 != link.ChecksumMd5 || got.SizeBytes != link.SizeBytes {
			t.Fatalf("printed %q (%v)", out, err)
		}
		wantFile(t, filepath.Join(dir, "whole.tar.gz"), link.ChecksumMd5, link.SizeBytes)
	})

	t.Run("connection cut", func(t *testing.T) {
		before := len(w.proxy.downloadRanges())
		w.proxy.cutNextDownload(link.SizeBytes / 2)
		if _, code, err := download(t, "cut.tar.gz"); code != 0 {
			t.Fatalf("exit %d (%v)", code, err)
		}
		wantFile(t, filepath.Join(dir, "cut.tar.gz"), link.ChecksumMd5, link.SizeBytes)
		ranges := w.proxy.downloadRanges()[before:]
		if len(ranges) != 2 || ranges[0] != "" || !strings.HasPrefix(ranges[1], "bytes=") || ranges[1] == "bytes=0-" {
			t.Errorf("requests' ranges %q, want the whole file then the rest", ranges)
		}
	})

	whole, err := os.ReadFile(filepath.Join(dir, "whole.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("resumes a .part", func(t *testing.T) {
		half := int64(len(whole) / 3)
		writeFile(t, filepath.Join(dir, "resumed.tar.gz.part"), whole[:half])
		before := len(w.proxy.downloadRanges())
		if _, code, err := download(t, "resumed.tar.gz"); code != 0 {
			t.Fatalf("exit %d (%v)", code, err)
		}
		wantFile(t, filepath.Join(dir, "resumed.tar.gz"), link.ChecksumMd5, link.SizeBytes)
		if ranges := w.proxy.downloadRanges()[before:]; len(ranges) != 1 || ranges[0] != "bytes="+strconv.FormatInt(half, 10)+"-" {
			t.Errorf("requests' ranges %q, want one from byte %d", ranges, half)
		}
	})

	for name, part := range map[string][]byte{
		"corrupt complete .part": corrupt(whole, len(whole)/2),
		"corrupt prefix .part":   corrupt(whole[:len(whole)/2], 10),
	} {
		t.Run(name, func(t *testing.T) {
			final := filepath.Join(dir, "bad.tar.gz")
			writeFile(t, final+".part", part)
			_, code, err := download(t, "bad.tar.gz")
			if code != 1 || err == nil || !strings.Contains(err.Error(), "MD5") {
				t.Fatalf("exit %d (%v), want 1 for a mismatch", code, err)
			}
			for _, p := range []string{final, final + ".part"} {
				if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s is left (%v)", filepath.Base(p), err)
				}
			}
		})
	}

	// Without -o the file is named after the project, platform, build type and build number.
	t.Run("default file name", func(t *testing.T) {
		var b struct{ Platform, BuildType string }
		w.api(t, "GET", "/builds/"+id, nil, 200, &b)
		want := "Shooter-" + b.Platform + "-" + b.BuildType + "-1.tar.gz"
		here := t.TempDir()
		t.Chdir(here)
		out, _, code, err := runKiln(t, w.env, "artifacts", "download", id)
		if code != 0 || !strings.HasPrefix(out, want+" (") {
			t.Fatalf("exit %d (%v), printed %q; want the file %s", code, err, out, want)
		}
		wantFile(t, filepath.Join(here, want), link.ChecksumMd5, link.SizeBytes)
	})

	t.Run("no artifact", func(t *testing.T) {
		_, _, code, err := runKiln(t, w.env, "artifacts", "download", "AAAAAAAAAAAAAAAAAAAAAAAA", "-o", filepath.Join(dir, "none"))
		if code != 2 || !strings.Contains(err.Error(), "request id req_") {
			t.Fatalf("exit %d (%v)", code, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "none.part")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a .part was made for a build without artifact (%v)", err)
		}
	})
}

func wantFile(t *testing.T, path, md5hex string, size int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(b)
	if got := hex.EncodeToString(sum[:]); got != md5hex || int64(len(b)) != size {
		t.Errorf("%s: %d bytes, MD5 %s; want %d, %s", filepath.Base(path), len(b), got, size, md5hex)
	}
	if _, err := os.Stat(path + ".part"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s.part is left (%v)", filepath.Base(path), err)
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// corrupt is a copy of b with the byte at i changed.
func corrupt(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 0xff
	return c
}
