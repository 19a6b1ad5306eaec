package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/forecast"
)

// writeText writes a diff for a terminal: a line of totals, then a
// block per job (+ added, - removed, ~ changed) and a warning per herd.
func writeText(w io.Writer, d *forecast.Diff) {
	fmt.Fprintf(w, "from %s: %s\n", stamp(d.Start), summary(d))
	fmt.Fprintf(w, "launches over the day: %d before, %d after; busiest second: %s before, %s after\n",
		d.BeforeLaunches, d.AfterLaunches, peak(d.BeforePeak, d.BeforePeakAt), peak(d.AfterPeak, d.AfterPeakAt))
	for _, j := range inOrder(d.Jobs) {
		fmt.Fprintf(w, "%s %s\n", map[forecast.Change]string{forecast.Added: "+", forecast.Removed: "-", forecast.Changed: "~"}[j.Change], j.ID)
		for _, f := range j.Fields {
			fmt.Fprintf(w, "    %s: %s -> %s\n", f.Name, quoted(f.Old), quoted(f.New))
		}
		if s := moves(j, stamp); s != "" {
			fmt.Fprintf(w, "    fire times in the week: %s\n", s)
		}
	}
	for _, h := range d.Herds {
		fmt.Fprintf(w, "warning: %d launches in the second %s (%d before), more than %d\n", h.After, stamp(h.At), h.Before, d.Herd)
		for _, s := range h.Jobs {
			if s.Suggest == "" {
				fmt.Fprintf(w, "    %s %q\n", s.ID, s.Schedule)
				continue
			}
			fmt.Fprintf(w, "    %s %q: spread it with %q\n", s.ID, s.Schedule, s.Suggest)
		}
		if more := h.JobCount - len(h.Jobs); more > 0 {
			fmt.Fprintf(w, "    and %d more jobs the change brings to it\n", more)
		}
	}
	if more := d.HerdSeconds - len(d.Herds); more > 0 {
		fmt.Fprintf(w, "warning: and %d more seconds past %d launches\n", more, d.Herd)
	}
	for _, s := range d.Invalid {
		fmt.Fprintf(w, "not forecast: %s\n", s)
	}
}

// writeMarkdown writes a diff as a pull request's comment: totals, the
// herds first (they are what a reviewer must act on), then a table of the
// jobs. Everything a config wrote is in a code span.
func writeMarkdown(w io.Writer, d *forecast.Diff, sides [2]string) {
	fmt.Fprintf(w, "## Sundial: what %s → %s does\n\n", code(sides[0]), code(sides[1]))
	fmt.Fprintf(w, "Forecast from %s: %s.\n\n", stamp(d.Start), summary(d))
	fmt.Fprintf(w, "| over the next day | before | after |\n|---|--:|--:|\n")
	fmt.Fprintf(w, "| launches | %d | %d |\n", d.BeforeLaunches, d.AfterLaunches)
	fmt.Fprintf(w, "| busiest second | %s | %s |\n\n", peak(d.BeforePeak, d.BeforePeakAt), peak(d.AfterPeak, d.AfterPeakAt))
	if d.HerdSeconds > 0 {
		fmt.Fprintf(w, "### ⚠️ %s past %d launches\n\n", plural(d.HerdSeconds, "second"), d.Herd)
		fmt.Fprintf(w, "The change piles these launches into one second; a hashed field (`H`) spreads the jobs it brings.\n\n")
		fmt.Fprintf(w, "| second | before | after | jobs the change brings, and how to spread them |\n|---|--:|--:|---|\n")
		for _, h := range d.Herds {
			var ids []string
			for _, s := range h.Jobs {
				spread := ""
				if s.Suggest != "" {
					spread = " → " + code(s.Suggest)
				}
				ids = append(ids, code(s.ID)+" "+code(s.Schedule)+spread)
			}
			if more := h.JobCount - len(h.Jobs); more > 0 {
				ids = append(ids, fmt.Sprintf("and %d more", more))
			}
			fmt.Fprintf(w, "| %s | %d | %d | %s |\n", stamp(h.At), h.Before, h.After, strings.Join(ids, "<br>"))
		}
		if more := d.HerdSeconds - len(d.Herds); more > 0 {
			fmt.Fprintf(w, "\nand %s more.\n", plural(more, "second"))
		}
		fmt.Fprintln(w)
	}
	if len(d.Jobs) > 0 {
		fmt.Fprintf(w, "### Jobs\n\n| job | change | fields | fire times in the next week |\n|---|---|---|---|\n")
		for i, j := range inOrder(d.Jobs) {
			if i == maxMarkdownJobs {
				fmt.Fprintf(w, "\nand %d more jobs: `sundial diff` lists them all.\n", len(d.Jobs)-i)
				break
			}
			var fields []string
			for _, f := range j.Fields {
				fields = append(fields, fmt.Sprintf("%s: %s → %s", code(f.Name), codeOrNone(f.Old), codeOrNone(f.New)))
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", code(j.ID), j.Change, strings.Join(fields, "<br>"), moves(j, stamp))
		}
	}
	for i, s := range d.Invalid {
		if i == 0 {
			fmt.Fprintf(w, "\nNot forecast:\n\n")
		}
		fmt.Fprintf(w, "- %s\n", code(s))
	}
}

// maxMarkdownJobs bounds the jobs a Markdown diff lists, which must fit
// in a pull request's comment (GitHub takes 65,536 characters).
const maxMarkdownJobs = 50

// inOrder lists the jobs a reviewer reads first first: the changed, the
// removed, then the added, each by id.
func inOrder(jobs []forecast.JobDiff) []forecast.JobDiff {
	rank := map[forecast.Change]int{forecast.Changed: 0, forecast.Removed: 1, forecast.Added: 2}
	return slices.SortedStableFunc(slices.Values(jobs), func(a, b forecast.JobDiff) int { return rank[a.Change] - rank[b.Change] })
}

// summary says how many jobs change and how many herd warnings there are.
func summary(d *forecast.Diff) string {
	if len(d.Jobs) == 0 {
		return "no job changes"
	}
	n := map[forecast.Change]int{}
	for _, j := range d.Jobs {
		n[j.Change]++
	}
	s := fmt.Sprintf("%s change (%d added, %d removed, %d changed)", plural(len(d.Jobs), "job"), n[forecast.Added], n[forecast.Removed], n[forecast.Changed])
	if d.HerdSeconds > 0 {
		s += fmt.Sprintf(", %s past %d launches", plural(d.HerdSeconds, "second"), d.Herd)
	}
	return s
}

// moves says which fire times in the week a job loses and gains.
func moves(j forecast.JobDiff, at func(time.Time) string) string {
	var parts []string
	for _, side := range []struct {
		what  string
		times []time.Time
		count int
	}{{"gone", j.Gone, j.GoneCount}, {"new", j.Come, j.ComeCount}} {
		if side.count == 0 {
			continue
		}
		if j.Change != forecast.Changed {
			// Every fire time of the job: when it starts or stops says enough.
			parts = append(parts, fmt.Sprintf("%d %s, from %s", side.count, side.what, at(side.times[0])))
			continue
		}
		var ts []string
		for _, t := range side.times {
			ts = append(ts, at(t))
		}
		if more := side.count - len(side.times); more > 0 {
			ts = append(ts, fmt.Sprintf("and %d more", more))
		}
		parts = append(parts, fmt.Sprintf("%d %s (%s)", side.count, side.what, strings.Join(ts, ", ")))
	}
	if len(parts) == 0 && j.Change == forecast.Changed {
		return "none move"
	}
	return strings.Join(parts, "; ")
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func peak(n int, at time.Time) string {
	if n == 0 {
		return "none"
	}
	return fmt.Sprintf("%d at %s", n, stamp(at))
}

func quoted(s string) string {
	if s == "" {
		return "(none)"
	}
	return fmt.Sprintf("%q", s)
}

func codeOrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return code(s)
}

// code makes s a Markdown code span that s cannot end, on one line and
// inside a table cell.
func code(s string) string {
	s = strings.NewReplacer("\n", " ", "\r", " ", "|", `\|`).Replace(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}
