// Package keyring holds kiln's secret keys: one master key, from which a key for each purpose is
// derived (cursor signing, download URL signing, sealing secrets at rest). On one machine the
// master key lives in a file under KILN_DATA, so signatures and sealed secrets stay valid across
// restarts.
package keyring

import (
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Purpose names a derived key. Keys of different purposes are independent.
type Purpose string

const (
	PurposeCursor   Purpose = "kiln cursor v1"
	PurposeDownload Purpose = "kiln download url v1"
	PurposeSeal     Purpose = "kiln sealed secrets v1"
	PurposeState    Purpose = "kiln oauth state v1"
)

// MasterKeySize is the size of the master key in bytes.
const MasterKeySize = 32

// Keyring derives keys from a master key.
type Keyring struct {
	master []byte
}

// New returns a keyring over a master key of MasterKeySize bytes.
func New(master []byte) (*Keyring, error) {
	if len(master) != MasterKeySize {
		return nil, fmt.Errorf("keyring: master key must be %d bytes, got %d", MasterKeySize, len(master))
	}
	return &Keyring{master: append([]byte(nil), master...)}, nil
}

// FromBase64 reads a master key written as standard base64 (for environments such as Lambda,
// where it comes from a secret store).
func FromBase64(s string) (*Keyring, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("keyring: master key is not base64: %w", err)
	}
	return New(b)
}

// LoadOrCreate reads the master key file at path, creating it (mode 0600) with a fresh random key
// when it does not exist. A new file is written to a temporary name, synced and renamed, so a
// crash never leaves a half-written key.
func LoadOrCreate(path string) (*Keyring, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		return FromBase64(string(b))
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("keyring: read %s: %w", path, err)
	}
	master := make([]byte, MasterKeySize)
	if _, err := rand.Read(master); err != nil {
		return nil, fmt.Errorf("keyring: random key: %w", err)
	}
	if err := writeFileAtomic(path, []byte(base64.StdEncoding.EncodeToString(master)+"\n")); err != nil {
		return nil, err
	}
	// Another process may have won the race to create it: read back whatever is there now.
	return load(path)
}

// load reads an existing master key file.
func load(path string) (*Keyring, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("keyring: read %s: %w", path, err)
	}
	return FromBase64(string(b))
}

// Key returns the 32-byte key for a purpose.
func (k *Keyring) Key(p Purpose) []byte {
	key, err := hkdf.Key(sha256.New, k.master, nil, string(p), 32)
	if err != nil {
		panic("keyring: hkdf: " + err.Error()) // only for lengths hkdf cannot make
	}
	return key
}

func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("keyring: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".master-key-*")
	if err != nil {
		return fmt.Errorf("keyring: %w", err)
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("keyring: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("keyring: write key: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("keyring: sync key: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("keyring: %w", err)
	}
	// Link fails if the file appeared meanwhile, so a key another process wrote is never replaced.
	if err := os.Link(f.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("keyring: install key: %w", err)
	}
	return nil
}

// minSecretLength is the shortest secret string accepted by FromSecretString.
const minSecretLength = 32

// FromSecretString makes a keyring from a secret held as text, as AWS Secrets Manager generates
// it: a base64 master key is used as it is; any other string of at least 32 characters is hashed
// into one.
func FromSecretString(s string) (*Keyring, error) {
	s = strings.TrimSpace(s)
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && len(b) == MasterKeySize {
		return New(b)
	}
	if len(s) < minSecretLength {
		return nil, fmt.Errorf("keyring: the master secret must be at least %d characters", minSecretLength)
	}
	sum := sha256.Sum256([]byte(s))
	return New(sum[:])
}
