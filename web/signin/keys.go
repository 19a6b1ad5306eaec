package signin

import (
	"bufio"
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Sealer encrypts and authenticates cookie values with AES-256-GCM under
// the operator's keys. The first key seals; every key opens, so keys
// rotate by adding a new first line, and dropping the old line once the
// longest-lived cookie sealed with it (a session: SessionTTL) has expired.
type Sealer struct {
	aeads []cipher.AEAD
}

// KeyLen is the length of one key: 32 random bytes (AES-256).
const KeyLen = 32

// NewKey returns a fresh random key as a key file writes it (standard
// base64).
func NewKey() string {
	k := make([]byte, KeyLen)
	rand.Read(k)
	return base64.StdEncoding.EncodeToString(k)
}

// NewSealer returns a Sealer over the keys, the first of which seals.
func NewSealer(keys ...[]byte) (*Sealer, error) {
	if len(keys) == 0 {
		return nil, errors.New("no cookie keys")
	}
	s := &Sealer{}
	for i, k := range keys {
		if len(k) != KeyLen {
			return nil, fmt.Errorf("cookie key %d has %d bytes; want %d", i+1, len(k), KeyLen)
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		s.aeads = append(s.aeads, aead)
	}
	return s, nil
}

// ReadKeyFile reads a cookie key file: one key a line, each 32 random
// bytes in standard base64 (`head -c 32 /dev/urandom | base64`), the
// first the one that seals; blank lines and lines starting with # are
// skipped. A bad line is an error naming the file and the line.
func ReadKeyFile(path string) (*Sealer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cookie key file: %w", err)
	}
	var keys [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, err := base64.StdEncoding.DecodeString(line)
		if err != nil || len(k) != KeyLen {
			return nil, fmt.Errorf("%s:%d: want %d random bytes in standard base64 (head -c 32 /dev/urandom | base64)", path, n, KeyLen)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s: no key: want one line of %d random bytes in standard base64", path, KeyLen)
	}
	return NewSealer(keys...)
}

// Seal encrypts value for the given purpose and returns it as cookie-safe
// text. The purpose is authenticated data: a value sealed for one cookie
// does not open as another.
func (s *Sealer) Seal(purpose string, value []byte) string {
	aead := s.aeads[0]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(value)+aead.Overhead())
	rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, value, []byte(purpose)))
}

// Open returns the value Seal sealed for purpose, or an error if text was
// sealed for another purpose, under a key no longer held, or altered.
func (s *Sealer) Open(purpose, text string) ([]byte, error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(text)
	if err != nil {
		return nil, errors.New("cookie is not sealed by this server: not base64")
	}
	for _, aead := range s.aeads {
		if len(b) < aead.NonceSize()+aead.Overhead() {
			break
		}
		if v, err := aead.Open(nil, b[:aead.NonceSize()], b[aead.NonceSize():], []byte(purpose)); err == nil {
			return v, nil
		}
	}
	return nil, errors.New("cookie is not sealed by this server: altered, or sealed with a key no longer held")
}
