package console

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/store"
)

// logLine is one line of an invocation's debug log as its page shows it:
// when it was written and by whom. The log interleaves two streams: the
// engine's own lines, each starting with its time in RFC 3339 (engine
// writes "<time> attempt N STATUS[: message]" as each attempt moves on,
// and "<time> notify ..." as it tells the job's webhook), and after an
// attempt's end line the output its target returned, which carries no
// time of its own (a command's stdout and stderr share one pipe).
type logLine struct {
	At time.Time // zero for target output
	// Stream is "sundial" for the engine's lines, "output" for the
	// target's, "dropped" for the marker where the log's middle was cut.
	Stream  string
	Attempt int // the attempt the line belongs to; 0 before the first
	Text    string
}

// engineLine matches the lines the engine writes.
var engineLine = regexp.MustCompile(`^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) ((?:attempt (\d+) |notify ).*)$`)

// droppedLine matches the marker engine's appendLog puts where it cut the
// log's middle.
var droppedLine = regexp.MustCompile(`^\[\.\.\. \d+ bytes dropped \.\.\.\]$`)

// logLines splits a debug log into its lines, each with its time and
// stream.
func logLines(log []byte) []logLine {
	text := strings.TrimSuffix(string(log), "\n")
	if text == "" {
		return nil
	}
	var out []logLine
	attempt := 0
	for _, l := range strings.Split(text, "\n") {
		if m := engineLine.FindStringSubmatch(l); m != nil {
			if t, err := time.Parse(time.RFC3339Nano, m[1]); err == nil {
				if m[3] != "" {
					attempt, _ = strconv.Atoi(m[3])
				}
				out = append(out, logLine{At: t, Stream: "sundial", Attempt: attempt, Text: m[2]})
				continue
			}
		}
		if droppedLine.MatchString(l) {
			out = append(out, logLine{Stream: "dropped", Attempt: attempt, Text: l})
			continue
		}
		out = append(out, logLine{Stream: "output", Attempt: attempt, Text: l})
	}
	return out
}

// firstLaunch is when an invocation's first attempt launched, the moment
// its lateness counts to: a retry's launch comes after a backoff the job
// asked for, which is not lateness. Started is the current attempt's
// launch; a later attempt's record keeps the first one's only in its log,
// whose head keeps that line. Zero when it did not launch, or the log
// does not say.
func firstLaunch(inv *store.InvocationRecord) time.Time {
	if inv.Attempt <= 1 || inv.Started.IsZero() {
		return inv.Started
	}
	for _, l := range logLines(inv.Log) {
		if l.Stream == "sundial" && l.Attempt == 1 && strings.HasPrefix(l.Text, "attempt 1 LAUNCHING") {
			return l.At
		}
	}
	return time.Time{}
}
