package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/web"
	"github.com/sundial-cron/sundial/web/signin"
)

// PushPath is where remote systems report on the attempts they run for
// asynchronous targets (web.PushEndpoint): Swarming, through the push
// subscription of --swarming-pubsub-topic.
const PushPath = "/internal/push"

// minPushSecret is the shortest secret the push tokens are signed with.
const minPushSecret = 32

// readPushSecret reads --push-secret-file: the bytes of its one line.
func readPushSecret(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	if len(b) < minPushSecret {
		return nil, fmt.Errorf("%s: the secret has %d bytes; want at least %d", path, len(b), minPushSecret)
	}
	return b, nil
}

// withPush serves the push endpoint beside handler when the server has a
// push secret. The endpoint is outside sign-in: the attempt's token, which
// only the server can make, is what a push is checked by, and with
// --push-oidc-account the push subscription's OIDC token as well.
func (p parts) withPush(s *Settings, logger *slog.Logger, now func() time.Time, handler http.Handler) (http.Handler, error) {
	if len(s.pushSecret) == 0 {
		return handler, nil
	}
	var push http.Handler = &web.PushEndpoint{Secret: s.pushSecret, Check: p.eng.Check, Logger: logger}
	if s.Push.OIDCAccount != "" {
		gate, err := web.SignedBy(s.Push.OIDCAccount, signin.IDTokenOptions{
			Audience: strings.TrimSuffix(s.Cloud.PublicURL, "/") + PushPath,
			Now:      now,
		})
		if err != nil {
			return nil, fmt.Errorf("--push-oidc-account: %w", err)
		}
		push = web.Guard(gate, logger, push)
	}
	mux := http.NewServeMux()
	mux.Handle(PushPath, push)
	mux.Handle("/", handler)
	return mux, nil
}
