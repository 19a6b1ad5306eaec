package console

import (
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
)

// bulkDoneText is what the jobs page says after a bulk pause or resume,
// told by name as the job page is.
var bulkDoneText = map[string]string{
	"pause":  "paused the jobs picked; jobs already paused, or disabled, are as they were",
	"resume": "resumed the jobs paused for that reason",
}

// bulk pauses (pause true) or resumes the project's jobs a form picks,
// through the engine calls of POST /api/v1/projects/{p}/pause and
// /resume, for a viewer who may steer every job of the project: its
// owners and the administrators. It sends the browser back to the jobs
// page, filtered as it was.
func (c *console) bulk(pause bool) handler {
	return func(w http.ResponseWriter, r *http.Request, v viewer) error {
		project := r.PathValue("project")
		_, grants, err := c.project(r.Context(), v, project)
		if err != nil {
			return err
		}
		if !c.Roles.May(v.ID, access.Steer, grants, "") {
			return &pageError{status: http.StatusForbidden, msg: string(v.ID) + " may not steer every job of project " + project}
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := r.ParseForm(); err != nil {
			return badRequest("the form: %v", err)
		}
		sel := engine.Selection{Prefix: r.PostFormValue("prefix")}
		var res engine.BulkResult
		action := "resume"
		if pause {
			action = "pause"
			reason := strings.TrimSpace(r.PostFormValue("reason"))
			switch n := utf8.RuneCountInString(reason); {
			case n == 0:
				return badRequest("pause needs a reason: say why, for whoever finds the jobs paused")
			case n > maxReason:
				return badRequest("reason: %d characters; at most %d", n, maxReason)
			}
			sel.State = statemachine.State(r.PostFormValue("state"))
			if err := sel.Check(); err != nil {
				return badRequest("%v", err)
			}
			until, err := formUntil(r)
			if err != nil {
				return err
			}
			res, err = c.Engine.PauseJobs(r.Context(), project, sel, v.ID, reason, until)
		} else {
			sel.State, sel.PausedFor = statemachine.Paused, strings.TrimSpace(r.PostFormValue("paused_for"))
			if sel.PausedFor == "" {
				return badRequest("resume needs the reason the jobs were paused for, so jobs paused for other reasons stay paused")
			}
			res, err = c.Engine.ResumeJobs(r.Context(), project, sel, v.ID)
		}
		c.Logger.Info("jobs changed through the console", "identity", string(v.ID), "project", project, "action", action,
			"prefix", sel.Prefix, "state", string(sel.State), "paused_for", sel.PausedFor,
			"changed", len(res.Changed), "unchanged", len(res.Unchanged), "failed", len(res.Failed))
		if err != nil && len(res.Changed) == 0 {
			return err
		}
		q := url.Values{"done": {action}}
		http.Redirect(w, r, "/projects/"+url.PathEscape(project)+"?"+q.Encode(), http.StatusSeeOther)
		return nil
	}
}
