package console

import (
	"fmt"
	"slices"
	"time"

	"github.com/sundial-cron/sundial/store"
)

// The pictures are drawn here, as numbers an SVG template places: no
// script draws them, so they show with scripts off and in screenshots.

// cell is one occurrence in a strip.
type cell struct {
	X     int
	Class string // the outcome's colour: ok, fail, run, abort, skip
	Mark  string // the outcome's letter, so it does not hang on colour alone
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
			X: (pad + i) * (cellW + cellGap), Class: outcome(inv.Status), Mark: letter(inv),
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

// describe is an invocation in one line, for a cell's tooltip.
func describe(inv *store.InvocationRecord) string {
	s := utcSecond(inv.Occurrence) + ": " + inv.Status
	if inv.Status == "SKIPPED" {
		s += " (" + inv.Reason + ": " + explainSkip(inv) + ")"
		if inv.Count > 1 {
			s += fmt.Sprintf(", %d occurrences to %s", inv.Count, utcSecond(inv.Last))
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
	// The plot's right end, its lanes' heights, its axis and its
	// ticks' labels, for the template to place.
	Right, LaneRun, LaneSkip, Axis, TickY int
	Span                                  string // "24h" or "7d"
	Marks                                 []mark
	Ticks                                 []tick
	Runs                                  int // occurrences drawn
	Truncated                             bool
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

// Timeline geometry, in the SVG's own units: the page scales it to its
// width (at most tlWidth, at least what a phone scrolls), so a day's
// occurrences spread over the page's width.
const (
	tlWidth    = 1200
	tlHeight   = 150
	tlMargin   = 12
	tlLaneRun  = 42
	tlLaneSkip = 96
	tlAxis     = 124
)

// drawTimeline draws the invocations whose occurrence falls in the span
// before now; invs are newest first.
func drawTimeline(jobID string, invs []*store.InvocationRecord, now time.Time, span time.Duration, name string, truncated bool) timeline {
	tl := timeline{Width: tlWidth, Height: tlHeight, Right: tlWidth - tlMargin, LaneRun: tlLaneRun, LaneSkip: tlLaneSkip,
		Axis: tlAxis, TickY: tlAxis + 16, Span: name, Truncated: truncated}
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
	step, layout := 2*time.Hour, "15:04"
	if span > 48*time.Hour {
		step, layout = 24*time.Hour, "Mon 02"
	}
	// A tick too near the right end would have its label cut.
	for t := from.Truncate(step).Add(step); t.Before(now) && x(t) < float64(tl.Right-20); t = t.Add(step) {
		tl.Ticks = append(tl.Ticks, tick{X: x(t), Label: t.UTC().Format(layout)})
	}
	for _, inv := range invs {
		if inv.Occurrence.Before(from) || inv.Occurrence.After(now) {
			continue
		}
		m := mark{X: x(inv.Occurrence), Class: outcome(inv.Status), Title: describe(inv), URL: invocationURL(jobID, inv.ID), Y: tlLaneRun}
		if inv.Status == "SKIPPED" {
			m.Skip, m.Y = true, tlLaneSkip
		} else if !inv.Started.IsZero() && !inv.Backfill {
			// A backfilled occurrence launched when the backfill reached
			// it, long after its time: a line to it would read as
			// lateness. The line ends at the first attempt's launch; the
			// bar runs from there to the end, retries and their backoff
			// included.
			first := firstLaunch(inv)
			if first.IsZero() {
				first = inv.Started
			}
			m.Late = x(first)
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

// durations is a bar chart of recent runs' durations, oldest on the left,
// with a scale to read a trend against: gridlines at round durations up
// to the longest, and the median drawn across.
type durations struct {
	Width, Height int
	Left, Bottom  int // the plot's left edge and baseline
	Bars          []bar
	Max           string // the longest duration, the chart's top
	Grid          []gridline
	Median        gridline
	From, To      string // the oldest and newest runs' times, under the ends
}

type bar struct {
	X, Y, W, H        float64
	Class, Title, URL string
}

// gridline is a level of the duration chart, with its label.
type gridline struct {
	Y     float64
	Label string
}

// Duration chart geometry, in the SVG's own units.
const (
	durWidth  = 1200
	durHeight = 240
	durLeft   = 64  // room for the scale's labels
	durTop    = 12  // room above the longest bar
	durBottom = 216 // the baseline; the runs' times go under it
	durBars   = 100
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
	d := durations{Width: durWidth, Height: durHeight, Left: durLeft, Bottom: durBottom}
	var longest time.Duration
	took := make([]time.Duration, 0, len(runs))
	for _, inv := range runs {
		took = append(took, inv.Ended.Sub(inv.Started))
		longest = max(longest, took[len(took)-1])
	}
	if longest < time.Millisecond {
		return d // runs too short to draw: the history says "0 ms"
	}
	d.Max = roundDuration(longest)
	step := scaleStep(longest)
	top := (longest + step - 1) / step * step
	plotH := float64(durBottom - durTop)
	y := func(t time.Duration) float64 { return float64(durBottom) - plotH*float64(t)/float64(top) }
	for t := step; t <= top; t += step {
		d.Grid = append(d.Grid, gridline{Y: y(t), Label: scaleLabel(t)})
	}
	sorted := slices.Clone(took)
	slices.Sort(sorted)
	median := sorted[len(sorted)/2]
	d.Median = gridline{Y: y(median), Label: "median " + toTheSecond(median)}
	w := float64(durWidth-durLeft) / float64(durBars)
	for i := range runs {
		k := len(runs) - 1 - i
		inv := runs[k]
		h := max(1, plotH*float64(took[k])/float64(top))
		d.Bars = append(d.Bars, bar{X: float64(durLeft) + float64(i)*w, Y: float64(durBottom) - h, W: max(1, w-2), H: h,
			Class: outcome(inv.Status), Title: describe(inv), URL: invocationURL(jobID, inv.ID)})
	}
	d.From, d.To = utcSecond(runs[len(runs)-1].Started), utcSecond(runs[0].Started)
	return d
}

// scaleSteps are the round durations a duration chart's gridlines are
// multiples of.
var scaleSteps = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// scaleStep is the smallest round step that draws longest in at most
// five gridlines.
func scaleStep(longest time.Duration) time.Duration {
	for _, s := range scaleSteps {
		if longest <= 5*s {
			return s
		}
	}
	return (longest/5 + 24*time.Hour - 1) / (24 * time.Hour) * (24 * time.Hour)
}

// scaleLabel writes a gridline's round duration exactly: "1.5 min", not
// roundDuration's "1 min".
func scaleLabel(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%g s", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%g min", d.Minutes())
	}
	return fmt.Sprintf("%g h", d.Hours())
}

// toTheSecond writes a duration to the second, where roundDuration
// drops the seconds of one over a minute: a median line labelled "1 min"
// at 1 min 45 s would misread.
func toTheSecond(d time.Duration) string {
	if d < time.Minute || d >= time.Hour {
		return roundDuration(d)
	}
	d = d.Round(time.Second)
	if s := int(d.Seconds()) % 60; s != 0 {
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), s)
	}
	return fmt.Sprintf("%d min", int(d.Minutes()))
}
