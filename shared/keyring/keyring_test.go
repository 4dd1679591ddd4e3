package keyring

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestLoadOrCreateKeepsTheKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys", "master.key")
	k1, err := LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(k1.Key(PurposeCursor), k2.Key(PurposeCursor)) {
		t.Fatal("the key changed between loads")
	}
	if bytes.Equal(k1.Key(PurposeCursor), k1.Key(PurposeDownload)) {
		t.Fatal("two purposes share a key")
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, %v", fi.Mode(), err)
	}
	if err := os.WriteFile(path, []byte("not base64!"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreate(path); err == nil {
		t.Fatal("a damaged key file was accepted (or replaced)")
	}
}

func TestSealer(t *testing.T) {
	k, _ := New(bytes.Repeat([]byte{1}, MasterKeySize))
	s := k.Sealer()
	sealed := s.Seal([]byte("Bearer secret-upload-token"), []byte("setting-1"))
	if bytes.Contains(sealed, []byte("secret-upload-token")) {
		t.Fatal("sealed value holds the plaintext")
	}
	got, err := s.Open(sealed, []byte("setting-1"))
	if err != nil || string(got) != "Bearer secret-upload-token" {
		t.Fatalf("open = %q, %v", got, err)
	}
	if _, err := s.Open(sealed, []byte("setting-2")); err == nil {
		t.Error("opened with another record's associated data")
	}
	sealed[len(sealed)-1] ^= 1
	if _, err := s.Open(sealed, []byte("setting-1")); err == nil {
		t.Error("opened a tampered value")
	}
	other, _ := New(bytes.Repeat([]byte{2}, MasterKeySize))
	if _, err := other.Sealer().Open(s.Seal([]byte("x"), nil), nil); err == nil {
		t.Error("opened with another master key")
	}
}

func TestFromSecretString(t *testing.T) {
	if _, err := FromSecretString("too short"); err == nil {
		t.Error("a short secret was accepted")
	}
	a, err := FromSecretString("abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := FromSecretString("abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789\n")
	if !bytes.Equal(a.Key(PurposeSeal), b.Key(PurposeSeal)) {
		t.Error("trailing newline changes the key")
	}
}
