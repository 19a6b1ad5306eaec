package console

import (
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// pause pauses the job through engine.PauseUntil, as POST .../pause of
// the API does: with a reason, and, when the form says until when (in
// UTC, as its label says), an end at which the engine resumes the job by
// itself; the audit trail records both. An end that is not after now is
// the engine's to refuse (409, through act).
func pause(c *console, r *http.Request, v viewer, jobID string) (string, error) {
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	switch n := utf8.RuneCountInString(reason); {
	case n == 0:
		return "", badRequest("pause needs a reason: say why, for whoever finds the job paused")
	case n > maxReason:
		return "", badRequest("reason: %d characters; at most %d", n, maxReason)
	}
	until, err := formUntil(r)
	if err != nil {
		return "", err
	}
	done := "paused"
	if !until.IsZero() {
		done += " until " + utcText(until)
	}
	return done, c.Engine.PauseUntil(r.Context(), jobID, v.ID, reason, until)
}

// formUntil is a pause form's end, in UTC; empty is none (the zero time).
func formUntil(r *http.Request) (time.Time, error) {
	if strings.TrimSpace(r.PostFormValue("until")) == "" {
		return time.Time{}, nil
	}
	return formTime(r, "until")
}
