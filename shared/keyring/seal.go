package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// Sealer encrypts secrets at rest (upload auth headers, Perforce tickets) with AES-256-GCM. The
// associated data binds a sealed value to where it belongs (e.g. the build setting id), so a value
// copied to another record does not open.
type Sealer struct {
	aead cipher.AEAD
}

// Sealer returns the sealer of this keyring.
func (k *Keyring) Sealer() *Sealer {
	block, err := aes.NewCipher(k.Key(PurposeSeal))
	if err != nil {
		panic("keyring: aes: " + err.Error())
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic("keyring: gcm: " + err.Error())
	}
	return &Sealer{aead: aead}
}

// Seal encrypts plaintext; the result is nonce || ciphertext.
func (s *Sealer) Seal(plaintext, associated []byte) []byte {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plaintext)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic("keyring: crypto/rand failed: " + err.Error())
	}
	return s.aead.Seal(nonce, nonce, plaintext, associated)
}

// Open decrypts what Seal produced with the same associated data.
func (s *Sealer) Open(sealed, associated []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n+s.aead.Overhead() {
		return nil, errors.New("keyring: sealed value too short")
	}
	out, err := s.aead.Open(nil, sealed[:n], sealed[n:], associated)
	if err != nil {
		return nil, fmt.Errorf("keyring: open sealed value: %w", err)
	}
	return out, nil
}
