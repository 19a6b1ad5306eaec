package console

import (
	"errors"
	"net/http"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// doneText is what the job page says after each action. The page is
// told which action by name, never given text to show, so a link cannot
// make it say anything else.
var doneText = map[string]string{
	"trigger": "triggered; the new occurrence is in the history below (or recorded as skipped, under the job's overlap policy)",
	"pause":   "paused",
	"resume":  "resumed",
	"abort":   "aborted",
	"backfill": "backfill started; its occurrences that have no record run one at a time, oldest first, " +
		"marked backfill in the history below",
	"cancel-backfill": "backfill canceled; what it had not started will not start, and an invocation it started runs to its end",
}

// maxReason bounds a pause reason, as the API bounds it.
const maxReason = 500

// maxForm bounds an action's form: a reason and an invocation id.
const maxForm = 16 << 10

// action is a button of the job page: what it needs and what it does,
// through the engine calls the API makes, which record who asked in the
// job's audit trail.
type action struct {
	name string
	perm access.Permission
	do   func(c *console, r *http.Request, v viewer, jobID string) (done string, err error)
}

var actions = []action{
	{name: "trigger", perm: access.Trigger, do: func(c *console, r *http.Request, v viewer, jobID string) (string, error) {
		id, err := c.Engine.Trigger(r.Context(), jobID, v.ID)
		return "triggered " + id, err
	}},
	{name: "pause", perm: access.Steer, do: pause},
	{name: "resume", perm: access.Steer, do: func(c *console, r *http.Request, v viewer, jobID string) (string, error) {
		return "resumed", c.Engine.Resume(r.Context(), jobID, v.ID)
	}},
	{name: "abort", perm: access.Steer, do: func(c *console, r *http.Request, v viewer, jobID string) (string, error) {
		inv := r.PostFormValue("invocation")
		if inv != "" {
			if _, err := c.Store.Invocation(r.Context(), jobID, inv); errors.Is(err, store.ErrNotFound) {
				return "", notFound("invocation %q of job %s not found", inv, jobID)
			} else if err != nil {
				return "", err
			}
			return "aborted " + inv, c.Engine.Abort(r.Context(), jobID, inv, v.ID)
		}
		return "aborted every unfinished invocation", c.Engine.Abort(r.Context(), jobID, "", v.ID)
	}},
	// Backfill is a trigger of each occurrence it runs: the API's route
	// asks the same permission.
	{name: "backfill", perm: access.Trigger, do: backfill},
	{name: "cancel-backfill", perm: access.Trigger, do: cancelBackfill},
}

// act runs a button's action for a viewer who may, then sends the
// browser back to the job's page (303, so a reload does not post again),
// which says what was done.
func (c *console) act(a action) handler {
	return func(w http.ResponseWriter, r *http.Request, v viewer) error {
		project, name := r.PathValue("project"), r.PathValue("job")
		view, grants, err := c.jobView(r.Context(), v, project, name)
		if err != nil {
			return err
		}
		if !c.Roles.May(v.ID, a.perm, grants, name) {
			return &pageError{status: http.StatusForbidden, msg: string(v.ID) + " may not " + string(a.perm) + " job " + view.Job.ID}
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := r.ParseForm(); err != nil {
			return badRequest("the form: %v", err)
		}
		done, err := a.do(c, r, v, view.Job.ID)
		if errors.Is(err, store.ErrNotFound) {
			return notFound("job %s not found", view.Job.ID)
		}
		if errors.Is(err, statemachine.ErrRefused) {
			// The job's state refuses it (a backfill already under way,
			// none to cancel): the viewer reads the engine's reason.
			return &pageError{status: http.StatusConflict, msg: err.Error()}
		}
		if err != nil {
			return err
		}
		c.Logger.Info("job changed through the console", "identity", string(v.ID), "job", view.Job.ID, "action", a.name, "done", done)
		http.Redirect(w, r, jobURL(view.Job.ID)+"?done="+a.name, http.StatusSeeOther)
		return nil
	}
}
