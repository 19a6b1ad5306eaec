package targets

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
)

// PushRef names the attempt a push from a remote system is about. An
// asynchronous target hands it to the remote system with the attempt, and
// the remote system hands it back with its report of the end.
type PushRef struct {
	JobID      string `json:"job"`
	Invocation string `json:"invocation"`
	Attempt    int    `json:"attempt"`
}

// RefOf is the PushRef of a request.
func RefOf(req Request) PushRef {
	return PushRef{JobID: req.JobID, Invocation: req.Invocation, Attempt: req.Attempt}
}

// Encode is the ref as the remote system carries it.
func (r PushRef) Encode() string {
	b, _ := json.Marshal(r)
	return string(b)
}

// DecodePushRef reads what Encode wrote.
func DecodePushRef(s string) (PushRef, error) {
	var r PushRef
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return r, fmt.Errorf("push ref: %v", err)
	}
	if r.JobID == "" || r.Invocation == "" || r.Attempt < 1 {
		return r, fmt.Errorf("push ref %q: want a job, an invocation and an attempt of 1 or more", s)
	}
	return r, nil
}

// PushToken is the token that authenticates a push about ref: an HMAC of
// it under the server's secret, so a push can only be made by whom the
// attempt's launch told, and only about that attempt.
func PushToken(secret []byte, ref PushRef) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("sundial push v1\x00" + ref.JobID + "\x00" + ref.Invocation + "\x00" + strconv.Itoa(ref.Attempt)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// ValidPushToken reports, in constant time, whether token is ref's.
func ValidPushToken(secret []byte, ref PushRef, token string) bool {
	return len(secret) > 0 && hmac.Equal([]byte(PushToken(secret, ref)), []byte(token))
}
