package schedule_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/schedule"
)

// previewText writes a preview one line a line: "T", or "T..T N: why".
func previewText(p schedule.Preview) string {
	var b strings.Builder
	for _, l := range p.Lines {
		if !l.Removed() {
			fmt.Fprintf(&b, "%s\n", l.First.Format(time.RFC3339))
			continue
		}
		fmt.Fprintf(&b, "%s..%s %d: %s\n", l.First.Format(time.RFC3339), l.Last.Format(time.RFC3339), l.Count, l.Why)
	}
	if p.End != "" {
		b.WriteString(p.End + "\n")
	}
	return b.String()
}

// A preview lists every fire time of the expression from the first
// asked for to the last occurrence listed: the occurrences, and the
// others with why, runs of one reason on one line: the window, the
// calendars, the DST gap the job skips, the run cap past its last
// allowed run, and a pause until its end, which the cap does not count.
func TestPreviewSaysWhyEachFireTimeIsRemoved(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	from, _ := schedule.ParseBound("2026-03-04", ny, false)
	until, _ := schedule.ParseBound("2026-03-13", ny, true)
	s, err := schedule.Parse("30 2 * * *", schedule.Options{
		Location: ny, Gap: schedule.GapSkip, Active: schedule.Window{From: from, Until: until},
		Only: []*schedule.Calendar{mustCalendar(t, "business-days", nil, weekdays)},
		Skip: []*schedule.Calendar{mustCalendar(t, "holidays", nil, nil, "2026-03-09", "2026-03-09")},
	})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	got := previewText(s.Preview(schedule.Lookahead{From: start, N: 10}))
	want := `2026-03-02T02:30:00-05:00..2026-03-03T02:30:00-05:00 2: before the active window
2026-03-04T02:30:00-05:00
2026-03-05T02:30:00-05:00
2026-03-06T02:30:00-05:00
2026-03-07T02:30:00-05:00..2026-03-07T02:30:00-05:00 1: not on business-days
2026-03-08T03:00:00-04:00..2026-03-08T03:00:00-04:00 1: ` + schedule.WhyDSTGap + `
2026-03-09T02:30:00-04:00..2026-03-09T02:30:00-04:00 1: on holidays
2026-03-10T02:30:00-04:00
2026-03-11T02:30:00-04:00
2026-03-12T02:30:00-04:00
2026-03-13T02:30:00-04:00
no more occurrences after 2026-03-13T02:30:00-04:00: its active window ends 2026-03-13T23:59:59-04:00
`
	if got != want {
		t.Errorf("preview:\n got:\n%s\nwant:\n%s", got, want)
	}

	got = previewText(s.Preview(schedule.Lookahead{From: start, N: 3, Capped: true, RunsLeft: 1}))
	want = `2026-03-02T02:30:00-05:00..2026-03-03T02:30:00-05:00 2: before the active window
2026-03-04T02:30:00-05:00
2026-03-05T02:30:00-05:00..2026-03-06T02:30:00-05:00 2: ` + schedule.WhyRunCap + `
`
	if got != want {
		t.Errorf("with one run left of its cap:\n got:\n%s\nwant:\n%s", got, want)
	}
	got = previewText(s.Preview(schedule.Lookahead{From: start, N: 3, Capped: true, RunsLeft: 1,
		Paused: true, PausedUntil: time.Date(2026, 3, 5, 12, 0, 0, 0, time.UTC)}))
	want = `2026-03-02T02:30:00-05:00..2026-03-03T02:30:00-05:00 2: before the active window
2026-03-04T02:30:00-05:00..2026-03-05T02:30:00-05:00 2: ` + schedule.WhyPaused + `
2026-03-06T02:30:00-05:00
`
	if got != want {
		t.Errorf("paused until 2026-03-05T12:00Z, with one run left:\n got:\n%s\nwant:\n%s", got, want)
	}
	if p := s.Preview(schedule.Lookahead{From: start, N: 0}); len(p.Lines) != 0 || p.End != "" {
		t.Errorf("none asked for: %+v", p)
	}
}

// An interval schedule's preview is its occurrences, capped as a cron
// schedule's are.
func TestPreviewOfAnInterval(t *testing.T) {
	t.Parallel()
	s, err := schedule.Parse("@every 10m", schedule.Options{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	got := previewText(s.Preview(schedule.Lookahead{From: start, N: 3, Capped: true, RunsLeft: 2}))
	want := "2026-03-02T00:10:00Z\n2026-03-02T00:20:00Z\n2026-03-02T00:30:00Z..2026-03-02T00:30:00Z 1: " + schedule.WhyRunCap + "\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
