package console

import (
	"fmt"
	"time"

	"github.com/sundial-cron/sundial/store"
)

// The pictures are drawn here, as numbers an SVG template places: no
// script draws them, so they show with scripts off and in screenshots.

// cell is one occurrence in a strip.
type cell struct {
	X     int
	Class string // the outcome's colour: ok, fail, run, abort, skip
	Mark  string // a letter for skips, so the reason does not hang on colour alone
	Title string
	URL   string
}

// strip is a job's last occurrences as cells, oldest on the left.
type strip struct {
	Cells []cell
	Empty []int // x of the slots no occurrence fills yet
	Width int
}

// Strip geometry, in pixels.
const (
	cellW   = 12
	cellGap = 2
)

// drawStrip draws the newest-first invocations as n cells, oldest first.
func drawStrip(jobID string, invs []*store.InvocationRecord, n int) strip {
	s := strip{Width: n*(cellW+cellGap) - cellGap}
	pad := n - len(invs)
	for i := range pad {
		s.Empty = append(s.Empty, i*(cellW+cellGap))
	}
	for i := range invs {
		inv := invs[len(invs)-1-i]
		s.Cells = append(s.Cells, cell{
			X: (pad + i) * (cellW + cellGap), Class: outcome(inv.Status), Mark: skipMark(inv),
			Title: describe(inv), URL: invocationURL(jobID, inv.ID),
		})
	}
	return s
}

// outcome is the colour class of an invocation's status.
func outcome(status string) string {
	switch status {
	case "SUCCEEDED":
		return "ok"
	case "FAILED":
		return "fail"
	case "ABORTED":
		return "abort"
	case "SKIPPED":
		return "skip"
	}
	return "run"
}

// skipMarks are the letters of the skip reasons in a strip.
var skipMarks = map[string]string{"overrun": "O", "missed": "M", "paused": "P", "dst_gap": "G", "superseded": "S", "disabled": "D"}

func skipMark(inv *store.InvocationRecord) string {
	if inv.Status != "SKIPPED" {
		return ""
	}
	if m, ok := skipMarks[inv.Reason]; ok {
		return m
	}
	return "?"
}

// describe is an invocation in one line, for a cell's tooltip.
func describe(inv *store.InvocationRecord) string {
	s := inv.Occurrence.UTC().Format("2006-01-02 15:04 UTC") + ": " + inv.Status
	if inv.Status == "SKIPPED" {
		s += " (" + inv.Reason + ")"
		if inv.Count > 1 {
			s += fmt.Sprintf(", %d occurrences to %s", inv.Count, inv.Last.UTC().Format("2006-01-02 15:04 UTC"))
		}
	}
	if inv.Manual {
		s += ", triggered"
	}
	if inv.Backfill {
		s += ", backfill"
	}
	if !inv.Started.IsZero() && !inv.Ended.IsZero() {
		s += ", ran " + roundDuration(inv.Ended.Sub(inv.Started))
	}
	if inv.Message != "" {
		s += ": " + inv.Message
	}
	return s
}

// timeline places a window's occurrences at their scheduled times.
type timeline struct {
	Width, Height int
	Span          string // "24h" or "7d"
	Marks         []mark
	Ticks         []tick
	Runs          int // occurrences drawn
	Truncated     bool
}

// mark is one occurrence on a timeline: a dot at its scheduled time, a
// thin line to its launch (lateness) and a bar to its end (duration).
type mark struct {
	X, Late, Start, End float64
	Y                   int
	Class, Title, URL   string
	Skip                bool
}

type tick struct {
	X     float64
	Label string
}

// Timeline geometry: the plot's left and right margins and its lanes.
const (
	tlWidth  = 900
	tlMargin = 10
	laneRun  = 30
	laneSkip = 62
)

// drawTimeline draws the invocations whose occurrence falls in the span
// before now; invs are newest first.
func drawTimeline(jobID string, invs []*store.InvocationRecord, now time.Time, span time.Duration, name string, truncated bool) timeline {
	tl := timeline{Width: tlWidth, Height: 96, Span: name, Truncated: truncated}
	from := now.Add(-span)
	plot := float64(tlWidth - 2*tlMargin)
	x := func(t time.Time) float64 {
		if t.Before(from) {
			t = from
		}
		if t.After(now) {
			t = now
		}
		return tlMargin + plot*float64(t.Sub(from))/float64(span)
	}
	step, layout := 3*time.Hour, "15:04"
	if span > 48*time.Hour {
		step, layout = 24*time.Hour, "Mon 02"
	}
	for t := from.Truncate(step).Add(step); t.Before(now); t = t.Add(step) {
		tl.Ticks = append(tl.Ticks, tick{X: x(t), Label: t.UTC().Format(layout)})
	}
	for _, inv := range invs {
		if inv.Occurrence.Before(from) || inv.Occurrence.After(now) {
			continue
		}
		m := mark{X: x(inv.Occurrence), Class: outcome(inv.Status), Title: describe(inv), URL: invocationURL(jobID, inv.ID), Y: laneRun}
		if inv.Status == "SKIPPED" {
			m.Skip, m.Y = true, laneSkip
		} else if !inv.Started.IsZero() && !inv.Backfill {
			// A backfilled occurrence launched when the backfill reached
			// it, long after its time: a line to it would read as lateness.
			m.Late = x(inv.Started)
			end := inv.Ended
			if end.IsZero() {
				end = now
			}
			m.Start, m.End = m.Late, max(x(end), m.Late+2)
		}
		tl.Marks = append(tl.Marks, m)
		tl.Runs++
	}
	return tl
}

// durations is a bar chart of recent runs' durations, oldest on the left.
type durations struct {
	Width, Height int
	Bars          []bar
	Max           string // the longest duration, the chart's top
}

type bar struct {
	X, Y, W, H        float64
	Class, Title, URL string
}

// Duration chart geometry.
const (
	durWidth  = 900
	durHeight = 120
	durBars   = 60
)

// drawDurations charts the runs among invs (newest first) that started
// and ended, at most durBars of them.
func drawDurations(jobID string, invs []*store.InvocationRecord) durations {
	var runs []*store.InvocationRecord
	for _, inv := range invs {
		if !inv.Started.IsZero() && !inv.Ended.IsZero() && len(runs) < durBars {
			runs = append(runs, inv)
		}
	}
	d := durations{Width: durWidth, Height: durHeight}
	var longest time.Duration
	for _, inv := range runs {
		longest = max(longest, inv.Ended.Sub(inv.Started))
	}
	if longest < time.Millisecond {
		return d // runs too short to draw: the history says "0 ms"
	}
	d.Max = roundDuration(longest)
	w := float64(durWidth) / float64(durBars)
	for i := range runs {
		inv := runs[len(runs)-1-i]
		h := max(1, float64(durHeight-4)*float64(inv.Ended.Sub(inv.Started))/float64(longest))
		d.Bars = append(d.Bars, bar{X: float64(i) * w, Y: float64(durHeight) - h, W: w - 2, H: h,
			Class: outcome(inv.Status), Title: describe(inv), URL: invocationURL(jobID, inv.ID)})
	}
	return d
}
