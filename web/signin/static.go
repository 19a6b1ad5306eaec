package signin

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/sundial-cron/sundial/access"
)

// TokenPrefix starts every static token, so that a leaked one is easy to
// find by secret scanners and to tell from other credentials.
const TokenPrefix = "sundial_"

// MinTokenLen is the shortest static token taken.
const MinTokenLen = 32

// NewToken returns a fresh random static token and the line of the token
// file that maps it to id.
func NewToken(id access.Identity) (token, line string) {
	b := make([]byte, 32)
	rand.Read(b)
	token = TokenPrefix + hex.EncodeToString(b)
	sum := sha256.Sum256([]byte(token))
	return token, "sha256:" + hex.EncodeToString(sum[:]) + " " + string(id)
}

// StaticTokens authenticates machines by a static bearer token whose
// SHA-256 hash the operator's token file maps to an identity. The file
// holds only hashes: reading it grants nothing.
type StaticTokens struct {
	sums [][sha256.Size]byte
	ids  []access.Identity
}

// ReadStaticTokens reads a file of static tokens (--static-tokens-file):
// one token a line,
//
//	sha256:<64 hex digits> <identity>
//
// (the line `sundial token new` prints); blank lines and lines starting
// with # are skipped. A bad line is an error naming the file and line.
func ReadStaticTokens(path string) (*StaticTokens, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	st := &StaticTokens{}
	seen := map[[sha256.Size]byte]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s:%d: want sha256:<hex> <identity>", path, n)
		}
		hexSum, ok := strings.CutPrefix(fields[0], "sha256:")
		raw, err := hex.DecodeString(hexSum)
		if !ok || err != nil || len(raw) != sha256.Size {
			return nil, fmt.Errorf("%s:%d: %q: want sha256: and 64 hex digits, the hash of the token (never the token itself)", path, n, fields[0])
		}
		id, err := access.ParseIdentity(fields[1])
		if err != nil || (id.Kind() != access.KindUser && id.Kind() != access.KindServiceAccount) {
			return nil, fmt.Errorf("%s:%d: %q: want user:<email> or serviceAccount:<email>", path, n, fields[1])
		}
		sum := [sha256.Size]byte(raw)
		if prev, dup := seen[sum]; dup {
			return nil, fmt.Errorf("%s:%d: the same hash as line %d", path, n, prev)
		}
		seen[sum] = n
		st.sums = append(st.sums, sum)
		st.ids = append(st.ids, id)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

// Authenticate implements Authenticator. It claims bearer tokens that
// are not shaped as JSON Web Tokens: one that is not in the file is
// refused.
func (s *StaticTokens) Authenticate(r *http.Request) (access.Identity, error) {
	token, ok := bearer(r)
	if !ok || isJWT(token) {
		return access.Anonymous, nil
	}
	id, _, err := s.check(token)
	if err != nil {
		return access.Anonymous, fmt.Errorf("bearer %w", err)
	}
	return id, nil
}

// check returns the identity the file maps token to, and the token's
// hash: the one check of a static token, whether it comes as a bearer
// token or is typed into the console's token sign-in.
func (s *StaticTokens) check(token string) (access.Identity, [sha256.Size]byte, error) {
	sum := sha256.Sum256([]byte(token))
	if len(token) < MinTokenLen {
		return access.Anonymous, sum, fmt.Errorf("token too short (%d bytes; tokens have at least %d)", len(token), MinTokenLen)
	}
	id, ok := s.identity(sum)
	if !ok {
		return access.Anonymous, sum, errors.New("token not known to this server")
	}
	return id, sum, nil
}

// identity returns the identity the file maps a token's hash to.
func (s *StaticTokens) identity(sum [sha256.Size]byte) (access.Identity, bool) {
	// Every entry is compared, in constant time, so the answer's time
	// says nothing of which hash, or how much of one, matched.
	match := -1
	for i := range s.sums {
		if subtle.ConstantTimeCompare(sum[:], s.sums[i][:]) == 1 {
			match = i
		}
	}
	if match < 0 {
		return access.Anonymous, false
	}
	return s.ids[match], true
}
