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

// maxWebhookBody bounds a webhook's body, which is hashed whole for its
// signature; GitHub's push events stay far below it.
const maxWebhookBody = 4 << 20

// Refused are the projects whose newest config revision an import
// refused, each with why: file, line and field.
type Refused map[string]string

// reimport answers POST /api/v1/configs:reimport. The caller is a webhook
// that proves it holds the shared secret (GitHub's X-Hub-Signature-256,
// an HMAC-SHA256 of the body, or GitLab's X-Gitlab-Token), or an
// administrator. A signature that does not match is refused, never taken
// for an unsigned call.
//
// The cheapest check comes first, before any work a caller outside can
// cause: an unsigned call is authenticated before its body is read at all
// (it is never read); GitLab's token is compared before it; and a GitHub
// signature is checked as the body streams through the hash, so no caller
// makes the server hold a body in memory.
//
// A revision the import refused answers 422, so the pusher's webhook
// delivery shows it failed. An administrator is told each refused project
// and its error; a webhook only how many: one secret signs the pushes of
// every repo of a projects list, and a project's errors quote its config,
// which the other repos' pushers may not read (sundial config status
// shows each caller the projects it may see).
func (s *server) reimport(r *http.Request) (int, any, error) {
	if s.reimportFn == nil {
		return 0, nil, notFound("this server reads no config repo: there is nothing to reimport")
	}
	signed, err := s.checkWebhook(r)
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
	refused, err := s.reimportFn(context.WithoutCancel(r.Context()))
	if err != nil {
		s.log.Error("reimport failed", "caller", caller, "err", err)
		return 0, nil, &apiError{status: http.StatusBadGateway, msg: "reimport: " + err.Error()}
	}
	if len(refused) > 0 {
		s.log.Warn("configs reimported; revisions refused", "caller", caller, "refused", len(refused))
		if signed {
			return http.StatusUnprocessableEntity, map[string]any{"reimported": "refused", "refused_projects": len(refused)}, nil
		}
		return http.StatusUnprocessableEntity, map[string]any{"reimported": "refused", "refused": refused}, nil
	}
	s.log.Info("configs reimported", "caller", caller)
	return http.StatusOK, map[string]string{"reimported": "ok"}, nil
}

// checkWebhook reports whether the request is signed with the webhook
// secret; a signature or token that is there and wrong is an error. Only
// a GitHub signature reads the body, through the hash, at most
// maxWebhookBody of it.
func (s *server) checkWebhook(r *http.Request) (bool, error) {
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
	n, err := io.Copy(mac, io.LimitReader(r.Body, maxWebhookBody+1))
	if err != nil {
		return false, badRequest("reading the body: %v", err)
	}
	if n > maxWebhookBody {
		return false, &apiError{status: http.StatusRequestEntityTooLarge, msg: "the body is larger than a webhook's may be"}
	}
	if !hmac.Equal(got, mac.Sum(nil)) {
		return false, refused
	}
	return true, nil
}
