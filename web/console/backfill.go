package console

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/schedule"
	"github.com/sundial-cron/sundial/statemachine"
)

// formTimes are the layouts a time of a form (a backfill's bounds, a
// pause's end) may take: what a datetime-local input sends (read in UTC,
// as its label says, so the time does not depend on the browser's zone)
// and RFC 3339, as the API takes it.
var formTimes = []string{"2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339}

// formTime reads a time from the form.
func formTime(r *http.Request, name string) (time.Time, error) {
	v := strings.TrimSpace(r.PostFormValue(name))
	for _, layout := range formTimes {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, badRequest("%q must be a time in UTC, 2026-11-01T00:00 (or RFC 3339, 2026-11-01T00:00:00Z), not %q", name, v)
}

// backfill starts a backfill of [from, to) through engine.Backfill, as
// POST .../backfill of the API does, with its refusals: a bad range or one
// past the retention age is the viewer's mistake (400); one under way is
// a conflict (409, through act).
func backfill(c *console, r *http.Request, v viewer, jobID string) (string, error) {
	from, err := formTime(r, "from")
	if err != nil {
		return "", err
	}
	to, err := formTime(r, "to")
	if err != nil {
		return "", err
	}
	if !from.Before(to) {
		return "", badRequest("the backfill range is empty: from %s is not before to %s", utcText(from), utcText(to))
	}
	err = c.Engine.Backfill(r.Context(), jobID, from, to, v.ID)
	if errors.Is(err, engine.ErrBackfillTooOld) {
		return "", badRequest("%v", err)
	}
	return "backfill of [" + utcText(from) + ", " + utcText(to) + ")", err
}

// cancelBackfill stops the job's backfill through engine.CancelBackfill;
// with none under way the engine refuses, and act answers 409.
func cancelBackfill(c *console, r *http.Request, v viewer, jobID string) (string, error) {
	return "backfill canceled", c.Engine.CancelBackfill(r.Context(), jobID, v.ID)
}

func utcText(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// backfillView is the backfill under way as the job page shows it.
type backfillView struct {
	From time.Time
	// To is the end of the range when it is the one asked for, which is
	// not included; Through is its last instant instead when the engine
	// cut the range at the job's cursor, where the schedule took over.
	To, Through time.Time
	// Next is the next occurrence the backfill looks at, and Last the
	// last one in its range; zero when none is left or the schedule
	// cannot say.
	Next, Last time.Time
}

// showBackfill describes b with its schedule s (nil when the definition
// does not parse).
func showBackfill(b *statemachine.Backfill, s *schedule.Schedule) *backfillView {
	if b == nil {
		return nil
	}
	bv := &backfillView{From: b.From}
	// A cut range ends a nanosecond after the cursor, an occurrence, which
	// falls on a whole second: no range a person asks for ends so.
	if b.To.Nanosecond() == 1 {
		bv.Through = b.To.Add(-time.Nanosecond)
	} else {
		bv.To = b.To
	}
	if s == nil {
		return bv
	}
	for at := range s.Between(b.Next, b.To) {
		bv.Next = at
		break
	}
	if last, ok := s.Prev(b.To.Add(-time.Nanosecond)); ok && !bv.Next.IsZero() {
		bv.Last = last
	}
	return bv
}
