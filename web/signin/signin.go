// Package signin tells who makes a request: people signed in with OpenID
// Connect or with a static token in the console (a session cookie),
// people behind Identity-Aware Proxy (its signed header), machines with a
// bearer token (a Google-signed ID token of a service account, a static
// token whose hash the server keeps, or the deprecated admin token), and,
// in the local single-user mode, a caller on the server's own machine. New (settings.go) is the one place
// that decides, from Settings, which of them a server takes and in which
// order; the web server asks the Chain it returns.
//
// The Authenticator interface lives here rather than in package access:
// access decides what an identity may do and does no I/O, while telling
// who made a request means reading it, and the web server, which needs
// both, imports this package and not the other way round.
package signin

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/sundial-cron/sundial/access"
)

// Authenticator tells who made a request.
type Authenticator interface {
	// Authenticate returns the identity the request's credentials prove;
	// access.Anonymous with a nil error when the request carries no
	// credentials of this authenticator's kind; an error when it carries
	// some that fail (expired, forged, revoked): the request is then refused
	// with 401 and a JSON error, never served as anonymous.
	Authenticate(r *http.Request) (access.Identity, error)
}

// Chain is an Authenticator that asks each of its own in turn; the first
// that returns an identity other than access.Anonymous, or an error,
// decides. A request that carries an Authorization header none of them
// accepted is refused rather than served as anonymous: a mistyped or
// revoked token must be noticed. An empty Chain takes every caller for
// anonymous.
type Chain []Authenticator

// Authenticate implements Authenticator.
func (c Chain) Authenticate(r *http.Request) (access.Identity, error) {
	for _, a := range c {
		id, err := a.Authenticate(r)
		if err != nil {
			return access.Anonymous, err
		}
		if id != access.Anonymous && id != "" {
			return id, nil
		}
	}
	if r.Header.Get("Authorization") != "" {
		return access.Anonymous, errors.New("the Authorization header holds no credential this server accepts")
	}
	return access.Anonymous, nil
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
