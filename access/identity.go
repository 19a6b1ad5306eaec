// Package access decides who may do what in Sundial: the identities that
// make requests, the roles a project's config grants them, and the
// server's own administrators and groups. It does no I/O.
package access

import (
	"fmt"
	"net/mail"
	"strings"
)

// Identity is who makes a request: "user:<email>" for a person,
// "serviceAccount:<email>" for a machine, Anonymous for a caller who proved
// nothing, or Local for a caller on the server's machine in the local
// single-user mode (no identity provider configured).
type Identity string

const (
	// Anonymous is a caller with no credentials.
	Anonymous Identity = "anonymous"
	// Local is a caller on the server's own machine when the server runs
	// without sign-in: the single-user default of `sundial serve`.
	Local Identity = "local"
)

// Kinds of identity, the part before the colon.
const (
	KindUser           = "user"
	KindServiceAccount = "serviceAccount"
)

// User is the identity of a person signed in with the given email.
func User(email string) Identity { return Identity(KindUser + ":" + strings.ToLower(email)) }

// ServiceAccount is the identity of a machine with the given account email.
func ServiceAccount(email string) Identity {
	return Identity(KindServiceAccount + ":" + strings.ToLower(email))
}

// ParseIdentity reads an identity as configs and settings write it:
// "user:<email>", "serviceAccount:<email>", "anonymous" or "local". Emails
// compare case-insensitively, so they are kept in lower case.
func ParseIdentity(s string) (Identity, error) {
	switch Identity(s) {
	case Anonymous, Local:
		return Identity(s), nil
	}
	kind, email, ok := strings.Cut(s, ":")
	if !ok || (kind != KindUser && kind != KindServiceAccount) {
		return "", fmt.Errorf("identity %q: want user:<email>, serviceAccount:<email>, anonymous or local", s)
	}
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || a.Name != "" {
		return "", fmt.Errorf("identity %q: %q is not an email address", s, email)
	}
	return Identity(kind + ":" + strings.ToLower(email)), nil
}

// Kind is the identity's kind: KindUser, KindServiceAccount, or the whole
// identity for Anonymous and Local.
func (id Identity) Kind() string {
	kind, _, ok := strings.Cut(string(id), ":")
	if !ok {
		return string(id)
	}
	return kind
}

// Email is the identity's email; "" for Anonymous and Local.
func (id Identity) Email() string {
	_, email, _ := strings.Cut(string(id), ":")
	return email
}
