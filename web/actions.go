package web

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/store"
)

// maxReason bounds a pause reason: it is shown, not stored as a document.
const maxReason = 500

// noBody refuses any field in a request body; an empty body or {} is fine.
type noBody struct{}

// trigger asks for a run now. The run happens under the job's overlap
// policy, so the occurrence may wait for the one under way, replace it,
// or be recorded as skipped instead; "outcome" says which.
func (s *server) trigger(r *http.Request) (int, any, error) {
	jobID := jobIDOf(r)
	if err := decodeBody(r, &noBody{}); err != nil {
		return 0, nil, err
	}
	o, err := s.eng.TriggerJob(r.Context(), jobID, identityOf(r))
	if err != nil {
		return 0, nil, notFoundJob(err, jobID)
	}
	s.changed(r, jobID, "invocation", o.Invocation)
	extra := map[string]any{"invocation": o.Invocation, "outcome": "queued"}
	switch {
	case o.Skipped != "":
		extra["outcome"], extra["skip_reason"] = "skipped", string(o.Skipped)
	case o.Waiting:
		extra["outcome"] = "waiting"
	}
	if len(o.Aborted) > 0 {
		extra["replaced"] = toAborted(o.Aborted)
	}
	return s.answerJob(r, http.StatusAccepted, jobID, extra)
}

// abortedJSON is an invocation a request aborted, and the attempt it was
// on.
type abortedJSON struct {
	ID      string `json:"id"`
	Attempt int    `json:"attempt"`
}

func toAborted(as []engine.Aborted) []abortedJSON {
	out := make([]abortedJSON, 0, len(as))
	for _, a := range as {
		out = append(out, abortedJSON{ID: a.Invocation, Attempt: a.Attempt})
	}
	return out
}

// pause stops the job's ticks; it needs a reason, which is shown with it,
// and may say until when (RFC 3339), when the engine resumes it. A job
// paused already takes the new reason and end; "changed" is false when it
// had them.
func (s *server) pause(r *http.Request) (int, any, error) {
	jobID := jobIDOf(r)
	var body struct {
		Reason string `json:"reason"`
		Until  string `json:"until"`
	}
	if err := decodeBody(r, &body); err != nil {
		return 0, nil, err
	}
	reason, err := checkReason(body.Reason)
	if err != nil {
		return 0, nil, err
	}
	until, err := parseUntil(body.Until)
	if err != nil {
		return 0, nil, err
	}
	o, err := s.eng.PauseJob(r.Context(), jobID, identityOf(r), reason, until)
	if err != nil {
		return 0, nil, notFoundJob(err, jobID)
	}
	s.changed(r, jobID, "reason", reason, "until", body.Until, "changed", o.Changed)
	extra := map[string]any{"changed": o.Changed}
	if o.Renoted != "" {
		extra["previous_reason"] = o.Renoted
	}
	return s.answerJob(r, http.StatusOK, jobID, extra)
}

// resume restarts a paused job's ticks; resuming a job that is not paused
// changes nothing, and "changed" says so.
func (s *server) resume(r *http.Request) (int, any, error) {
	jobID := jobIDOf(r)
	if err := decodeBody(r, &noBody{}); err != nil {
		return 0, nil, err
	}
	o, err := s.eng.ResumeJob(r.Context(), jobID, identityOf(r))
	if err != nil {
		return 0, nil, notFoundJob(err, jobID)
	}
	s.changed(r, jobID, "changed", o.Changed)
	return s.answerJob(r, http.StatusOK, jobID, map[string]any{"changed": o.Changed})
}

// backfill runs the job's past occurrences in [from, to) that have no
// record, one at a time (engine.Backfill). It is a trigger of each: the
// triggerer role may ask for it.
func (s *server) backfill(r *http.Request) (int, any, error) {
	jobID := jobIDOf(r)
	var body struct {
		From string `json:"from"`
		To   string `json:"to"`
	}
	if err := decodeBody(r, &body); err != nil {
		return 0, nil, err
	}
	var bounds [2]time.Time
	for i, v := range []struct{ name, value string }{{"from", body.From}, {"to", body.To}} {
		t, err := time.Parse(time.RFC3339, v.value)
		if err != nil {
			return 0, nil, badRequest("%q must be a time in RFC 3339 (2026-11-01T00:00:00Z), not %q", v.name, v.value)
		}
		bounds[i] = t
	}
	if !bounds[0].Before(bounds[1]) {
		return 0, nil, badRequest("the backfill range is empty: from %s is not before to %s", body.From, body.To)
	}
	err := s.eng.Backfill(r.Context(), jobID, bounds[0], bounds[1], identityOf(r))
	if errors.Is(err, engine.ErrBackfillTooOld) {
		return 0, nil, badRequest("%s", err)
	}
	if err != nil {
		return 0, nil, notFoundJob(err, jobID)
	}
	s.changed(r, jobID, "from", body.From, "to", body.To)
	return s.answerJob(r, http.StatusAccepted, jobID, nil)
}

// cancelBackfill stops the job's backfill: what it has not started is not
// started. With no backfill under way it is a conflict.
func (s *server) cancelBackfill(r *http.Request) (int, any, error) {
	jobID := jobIDOf(r)
	if err := decodeBody(r, &noBody{}); err != nil {
		return 0, nil, err
	}
	if err := s.eng.CancelBackfill(r.Context(), jobID, identityOf(r)); err != nil {
		return 0, nil, notFoundJob(err, jobID)
	}
	s.changed(r, jobID)
	return s.answerJob(r, http.StatusOK, jobID, nil)
}

// abortJob ends every unfinished invocation of the job as ABORTED, and
// names each with the attempt it was on: none when nothing was
// unfinished.
func (s *server) abortJob(r *http.Request) (int, any, error) {
	jobID := jobIDOf(r)
	if err := decodeBody(r, &noBody{}); err != nil {
		return 0, nil, err
	}
	o, err := s.eng.AbortJob(r.Context(), jobID, "", identityOf(r))
	if err != nil {
		return 0, nil, notFoundJob(err, jobID)
	}
	s.changed(r, jobID, "aborted", len(o.Aborted))
	return s.answerJob(r, http.StatusOK, jobID, map[string]any{"aborted": toAborted(o.Aborted)})
}

// abortInvocation ends one unfinished invocation as ABORTED; one that has
// ended is a conflict, one that does not exist is not found.
func (s *server) abortInvocation(r *http.Request) (int, any, error) {
	jobID, id := jobIDOf(r), r.PathValue("invocation")
	if err := decodeBody(r, &noBody{}); err != nil {
		return 0, nil, err
	}
	if _, err := s.view(r, jobID); err != nil {
		return 0, nil, err
	}
	if _, err := s.st.Invocation(r.Context(), jobID, id); errors.Is(err, store.ErrNotFound) {
		return 0, nil, notFound("invocation %q of job %s not found", id, jobID)
	} else if err != nil {
		return 0, nil, err
	}
	if err := s.eng.Abort(r.Context(), jobID, id, identityOf(r)); err != nil {
		return 0, nil, notFoundJob(err, jobID)
	}
	s.changed(r, jobID, "invocation", id)
	inv, err := s.st.Invocation(r.Context(), jobID, id)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"invocation": toInv(inv)}, nil
}

// changed logs a change made through the API with who made it: the job's
// audit trail keeps the newest few, the server's log every one.
func (s *server) changed(r *http.Request, jobID string, attrs ...any) {
	s.log.Info("job changed through the API", append([]any{"identity", string(identityOf(r)), "job", jobID, "action", r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]}, attrs...)...)
}

// answerJob answers a change with the job as it is after it, and any
// extra fields.
func (s *server) answerJob(r *http.Request, status int, jobID string, extra map[string]any) (int, any, error) {
	v, err := s.view(r, jobID)
	if err != nil {
		return 0, nil, err
	}
	last, err := s.lastInvocation(r, jobID)
	if err != nil {
		return 0, nil, err
	}
	out := map[string]any{"job": toJob(v, last)}
	for k, x := range extra {
		out[k] = x
	}
	return status, out, nil
}

// notFoundJob names the job in the engine's "not found".
func notFoundJob(err error, jobID string) error {
	if errors.Is(err, store.ErrNotFound) {
		return notFound("job %s not found", jobID)
	}
	return err
}

// parseUntil reads a pause's end, RFC 3339; "" is none (the zero time).
func parseUntil(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	until, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, badRequest("until: %q: want a time in RFC 3339 (2026-11-01T09:00:00Z)", v)
	}
	return until, nil
}
