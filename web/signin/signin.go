// Package signin tells who makes a request: people signed in with OpenID
// Connect (a session cookie), people behind Identity-Aware Proxy (its
// signed header), and machines with a bearer token (a Google-signed ID
// token of a service account, or a static token whose hash the server
// keeps). Each authenticator has the shape of web.Authenticator without
// importing web; cmd/sundial wires them in.
package signin

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/sundial-cron/sundial/access"
)

// Authenticator tells who made a request: the identity its credentials
// prove, access.Anonymous with a nil error when it carries none of this
// authenticator's kind, or an error when the ones it carries fail. It is
// the shape of web.Authenticator.
type Authenticator interface {
	Authenticate(r *http.Request) (access.Identity, error)
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

// bearer returns the token of an "Authorization: Bearer <token>" header;
// present reports whether the header names the Bearer scheme at all, so
// that "Bearer " with no token is refused rather than ignored.
func bearer(r *http.Request) (token string, present bool) {
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// isJWT reports whether a bearer token has the shape of a JSON Web Token
// (three dot-separated parts), which the ID-token authenticator claims;
// static tokens never hold a dot.
func isJWT(token string) bool { return strings.Count(token, ".") == 2 }
