package web

import (
	"net/http"

	"github.com/sundial-cron/sundial/access"
)

// authenticate asks the server's authenticators who made the request
// (signin.Chain says how they decide); credentials they refuse are a 401
// with a JSON error.
func (s *server) authenticate(r *http.Request) (access.Identity, error) {
	id, err := s.authn.Authenticate(r)
	if err != nil {
		return "", &apiError{status: http.StatusUnauthorized, msg: "credentials refused: " + err.Error(),
			header: http.Header{"Www-Authenticate": {`Bearer realm="sundial", error="invalid_token"`}}}
	}
	return id, nil
}
