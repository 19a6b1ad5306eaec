package web

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/targets"
)

// maxPushBody bounds a push: Swarming's message is a Swarming task id and
// a ref.
const maxPushBody = 64 << 10

// PushEndpoint is where a remote system says that an attempt it runs for
// an asynchronous target has changed: a Pub/Sub push subscription
// delivering the message Swarming posts to its topic. The push is only a
// nudge: the endpoint asks the target how the attempt is doing
// (Engine.Check), so a push cannot make up an outcome, and a push that
// races a poll, or comes twice, records the end once.
//
// A push must carry the attempt's token (targets.PushToken under Secret) in
// the message's auth_token attribute. It answers 204 when the push is
// done (the attempt's end recorded, or nothing to record), 400 for a body
// that is not a push, 403 for a token that is not the attempt's, and 500
// when the push should come again.
type PushEndpoint struct {
	Secret []byte
	// Check asks the target about an attempt and records its end if it
	// has ended: the engine's Check.
	Check  func(ctx context.Context, jobID, invocation string, attempt int) error
	Logger *slog.Logger // default slog.Default()
}

// pushEnvelope is what a Pub/Sub push subscription POSTs.
type pushEnvelope struct {
	Message struct {
		Data       string            `json:"data"`
		Attributes map[string]string `json:"attributes"`
		MessageID  string            `json:"messageId"`
	} `json:"message"`
	Subscription string `json:"subscription"`
}

// ServeHTTP implements http.Handler.
func (e *PushEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	log := e.Logger
	if log == nil {
		log = slog.Default()
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "push: want POST", http.StatusMethodNotAllowed)
		return
	}
	ref, token, err := decodePush(http.MaxBytesReader(w, r.Body, maxPushBody))
	if err != nil {
		log.Warn("refusing a malformed push", "err", err)
		http.Error(w, "push: "+err.Error(), http.StatusBadRequest)
		return
	}
	if !targets.ValidPushToken(e.Secret, ref, token) {
		log.Warn("refusing a push whose token is not the attempt's", "job", ref.JobID, "invocation", ref.Invocation, "attempt", ref.Attempt)
		http.Error(w, "push: the auth_token is not this attempt's", http.StatusForbidden)
		return
	}
	err = e.Check(r.Context(), ref.JobID, ref.Invocation, ref.Attempt)
	switch {
	case errors.Is(err, store.ErrNotFound):
		// The job or the invocation is gone (removed, or its history
		// trimmed): nothing is left to record, and a retry would not
		// change that.
		log.Info("a push about an attempt that is no longer stored", "job", ref.JobID, "invocation", ref.Invocation)
	case err != nil:
		log.Warn("a push could not be recorded; it will come again", "job", ref.JobID, "invocation", ref.Invocation, "err", err)
		http.Error(w, "push: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// decodePush reads a Pub/Sub push envelope around Swarming's message,
// {"task_id": ..., "userdata": <the PushRef>}, with its auth_token.
func decodePush(body io.Reader) (targets.PushRef, string, error) {
	var env pushEnvelope
	dec := json.NewDecoder(body)
	if err := dec.Decode(&env); err != nil {
		return targets.PushRef{}, "", fmt.Errorf("want a Pub/Sub push's JSON: %v", err)
	}
	data, err := base64.StdEncoding.DecodeString(env.Message.Data)
	if err != nil {
		return targets.PushRef{}, "", fmt.Errorf("message.data: want base64: %v", err)
	}
	var msg struct {
		TaskID   string `json:"task_id"`
		Userdata string `json:"userdata"`
	}
	if err := json.Unmarshal(data, &msg); err != nil {
		return targets.PushRef{}, "", fmt.Errorf("message.data: want {\"task_id\", \"userdata\"}: %v", err)
	}
	ref, err := targets.DecodePushRef(msg.Userdata)
	if err != nil {
		return targets.PushRef{}, "", fmt.Errorf("message.data.userdata: %v", err)
	}
	token := env.Message.Attributes["auth_token"]
	if token == "" {
		return targets.PushRef{}, "", errors.New("message.attributes.auth_token: missing")
	}
	return ref, token, nil
}
