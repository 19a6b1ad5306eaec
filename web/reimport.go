package web

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
)

// reimportPath imports the config repos at once: a push's webhook calls
// it, so owners do not wait for the next refresh.
const reimportPath = prefix + "/configs:reimport"

// maxWebhookBody bounds a webhook's body, which is signed whole and so
// read whole; GitHub's push events stay far below it.
const maxWebhookBody = 4 << 20

// reimport answers POST /api/v1/configs:reimport. The caller is a webhook
// that proves it holds the shared secret (GitHub's X-Hub-Signature-256,
// an HMAC-SHA256 of the body, or GitLab's X-Gitlab-Token), or an
// administrator. A signature that does not match is refused, never taken
// for an unsigned call; the body is not read for anything else.
func (s *server) reimport(r *http.Request) (int, any, error) {
	if s.reimportFn == nil {
		return 0, nil, notFound("this server reads no config repo: there is nothing to reimport")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxWebhookBody+1))
	if err != nil {
		return 0, nil, badRequest("reading the body: %v", err)
	}
	if len(body) > maxWebhookBody {
		return 0, nil, &apiError{status: http.StatusRequestEntityTooLarge, msg: "the body is larger than a webhook's may be"}
	}
	signed, err := s.checkWebhook(r, body)
	if err != nil {
		return 0, nil, s.refused(r, "", err)
	}
	caller := "webhook"
	if !signed {
		if err := s.csrf.Check(r); err != nil {
			return 0, nil, s.refused(r, "", &apiError{status: http.StatusForbidden, msg: "cross-origin request refused: " + err.Error()})
		}
		id, err := s.authenticate(r)
		if err != nil {
			return 0, nil, s.refused(r, "", err)
		}
		if !s.roles.Administrator(id) {
			return 0, nil, s.refused(r, id, &apiError{status: http.StatusForbidden,
				msg: "only an administrator, or a webhook signed with the shared secret, may reimport the configs"})
		}
		caller = string(id)
	}
	// The import outlives a webhook sender that hangs up (GitHub waits
	// ten seconds): what it fetched is applied all the same.
	if err := s.reimportFn(context.WithoutCancel(r.Context())); err != nil {
		s.log.Error("reimport failed", "caller", caller, "err", err)
		return 0, nil, &apiError{status: http.StatusBadGateway, msg: "reimport: " + err.Error()}
	}
	s.log.Info("configs reimported", "caller", caller)
	return http.StatusOK, map[string]string{"reimported": "ok"}, nil
}

// checkWebhook reports whether the request is signed with the webhook
// secret; a signature or token that is there and wrong is an error.
func (s *server) checkWebhook(r *http.Request, body []byte) (bool, error) {
	sig, token := r.Header.Get("X-Hub-Signature-256"), r.Header.Get("X-Gitlab-Token")
	if sig == "" && token == "" {
		return false, nil
	}
	refused := &apiError{status: http.StatusUnauthorized, msg: "the webhook's signature does not match the shared secret"}
	if len(s.webhookSecret) == 0 {
		return false, &apiError{status: http.StatusUnauthorized, msg: "this server has no webhook secret (--config-webhook-secret-file): signed webhooks are refused"}
	}
	if token != "" {
		if subtle.ConstantTimeCompare([]byte(token), s.webhookSecret) != 1 {
			return false, refused
		}
		return true, nil
	}
	got, err := hex.DecodeString(strings.TrimPrefix(sig, "sha256="))
	if err != nil || !strings.HasPrefix(sig, "sha256=") {
		return false, refused
	}
	mac := hmac.New(sha256.New, s.webhookSecret)
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return false, refused
	}
	return true, nil
}
