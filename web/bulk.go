package web

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
)

// bulkAnswer is what a bulk pause or resume did. Incomplete is set when
// it stopped before the end (the store failing, the request cancelled):
// the jobs listed are done, and repeating the request does the rest.
type bulkAnswer struct {
	Changed    []string          `json:"changed"`
	Unchanged  []string          `json:"unchanged"`
	Failed     map[string]string `json:"failed,omitempty"`
	Incomplete string            `json:"incomplete,omitempty"`
	// OtherReasons are, for a resume with paused_for, the reasons the
	// paused jobs it left are paused for, with how many of each.
	OtherReasons map[string]int `json:"other_reasons,omitempty"`
}

// pauseProject pauses the project's jobs a selection picks, all with one
// reason, and until when if asked: for incidents.
func (s *server) pauseProject(r *http.Request) (int, any, error) {
	var body struct {
		Reason string `json:"reason"`
		Prefix string `json:"prefix"`
		State  string `json:"state"`
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
	sel := engine.Selection{Prefix: body.Prefix, State: statemachine.State(body.State)}
	if err := sel.Check(); err != nil {
		return 0, nil, badRequest("%v", err)
	}
	if err := s.existing(r); err != nil {
		return 0, nil, err
	}
	res, err := s.eng.PauseJobs(r.Context(), r.PathValue("project"), sel, identityOf(r), reason, until)
	return s.bulkDone(r, res, err, "reason", reason, "prefix", body.Prefix, "state", body.State, "until", body.Until)
}

// resumeProject resumes the project's paused jobs a selection picks;
// paused_for keeps only those paused with that reason.
func (s *server) resumeProject(r *http.Request) (int, any, error) {
	var body struct {
		Prefix    string `json:"prefix"`
		PausedFor string `json:"paused_for"`
	}
	if err := decodeBody(r, &body); err != nil {
		return 0, nil, err
	}
	sel := engine.Selection{Prefix: body.Prefix, State: statemachine.Paused, PausedFor: strings.TrimSpace(body.PausedFor)}
	if err := s.existing(r); err != nil {
		return 0, nil, err
	}
	res, err := s.eng.ResumeJobs(r.Context(), r.PathValue("project"), sel, identityOf(r))
	return s.bulkDone(r, res, err, "prefix", body.Prefix, "paused_for", sel.PausedFor)
}

// existing answers 404 for a project that does not exist, which an
// administrator's bulk request would otherwise find empty.
func (s *server) existing(r *http.Request) error {
	project := r.PathValue("project")
	ok, err := s.projectExists(r.Context(), project)
	if err == nil && !ok {
		err = notFound("project %q not found", project)
	}
	return err
}

// bulkDone logs a bulk change with who made it and answers with what it
// did. Only a failure before any job was touched is an error answer: once
// some jobs changed, the answer must say which.
func (s *server) bulkDone(r *http.Request, res engine.BulkResult, err error, attrs ...any) (int, any, error) {
	if err != nil && len(res.Changed)+len(res.Unchanged)+len(res.Failed) == 0 {
		return 0, nil, err
	}
	s.log.Info("jobs changed through the API", append([]any{"identity", string(identityOf(r)), "project", r.PathValue("project"),
		"action", r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:], "changed", len(res.Changed), "unchanged", len(res.Unchanged), "failed", len(res.Failed)}, attrs...)...)
	a := bulkAnswer{Changed: res.Changed, Unchanged: res.Unchanged, Failed: res.Failed, OtherReasons: res.OtherReasons}
	if a.Changed == nil {
		a.Changed = []string{}
	}
	if a.Unchanged == nil {
		a.Unchanged = []string{}
	}
	if err != nil {
		a.Incomplete = err.Error() + "; repeat the request to finish"
	}
	return http.StatusOK, a, nil
}

// checkReason trims a pause reason and refuses a blank or overlong one.
func checkReason(reason string) (string, error) {
	reason = strings.TrimSpace(reason)
	switch {
	case reason == "":
		return "", badRequest(`pause needs a reason: send {"reason": "..."}`)
	case utf8.RuneCountInString(reason) > maxReason:
		return "", badRequest("reason: %d characters; at most %d", utf8.RuneCountInString(reason), maxReason)
	}
	return reason, nil
}
