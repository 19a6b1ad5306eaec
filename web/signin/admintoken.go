package signin

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"

	"github.com/sundial-cron/sundial/access"
)

// AdminTokenIdentity is who a caller with the --admin-token-file token is:
// a machine identity of its own, which the server makes an administrator,
// so what it does is audited under a name. The .invalid domain can never
// be a real account's.
const AdminTokenIdentity access.Identity = "serviceAccount:admin-token@sundial.invalid"

// adminToken authenticates the one static token of --admin-token-file.
type adminToken struct{ sum [sha256.Size]byte }

// AdminToken returns the authenticator of the admin token: a request
// bearing it is AdminTokenIdentity. A request bearing another token is
// left to the other authenticators (anonymous, not an error): the token
// may be theirs. Deprecated in favour of static token files, which name
// each machine.
func AdminToken(token string) Authenticator {
	return adminToken{sum: sha256.Sum256([]byte(token))}
}

// Authenticate implements Authenticator.
func (a adminToken) Authenticate(r *http.Request) (access.Identity, error) {
	given, ok := bearer(r)
	if !ok || given == "" {
		return access.Anonymous, nil
	}
	// Hashing first makes the comparison's time independent of the
	// token's length too.
	sum := sha256.Sum256([]byte(given))
	if subtle.ConstantTimeCompare(sum[:], a.sum[:]) != 1 {
		return access.Anonymous, nil
	}
	return AdminTokenIdentity, nil
}
