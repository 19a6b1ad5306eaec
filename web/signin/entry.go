package signin

// Entry is how a person gets into the console of a server: what its
// authenticators accept from a browser, so that a page refused to a
// signed-out person says what is true of this server.
type Entry struct {
	// OIDC is the path that starts sign-in with the OpenID Connect
	// issuer (it takes ?next=); "" without.
	OIDC string
	// Token is the path of the sign-in with a static token (it takes
	// ?next=); "" without.
	Token string
	// SignOut is the path a signed-in person posts to end the session;
	// "" when no sign-in keeps one.
	SignOut string
	// IAP: people come through Identity-Aware Proxy, which signs them in
	// before a request reaches the server.
	IAP bool
	// Local: the single-user mode, where a browser on the server's
	// machine, run by the server's user, is its administrator.
	Local bool
	// Bearer: machines get in with bearer tokens on the API, which a
	// browser does not send.
	Bearer bool
}

// Entry says how a person gets in past c, from the authenticators in it.
func (c Chain) Entry() Entry {
	var e Entry
	for _, a := range c {
		switch a.(type) {
		case *OIDC:
			e.OIDC = SignInPath
		case *TokenSignIn:
			e.Token = TokenSignInPath
		case *IAP:
			e.IAP = true
		case LocalCaller:
			e.Local = true
		case *StaticTokens, *IDTokens, adminToken:
			e.Bearer = true
		}
	}
	if e.OIDC != "" || e.Token != "" {
		e.SignOut = SignOutPath
	}
	return e
}
