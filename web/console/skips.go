package console

import "github.com/sundial-cron/sundial/store"

// skipReason is a reason an occurrence is skipped (statemachine's
// SkipReason), with the letter that marks it in strips and grids and
// what it means, in the words every page that shows it uses.
type skipReason struct {
	Reason, Letter, Means string
}

// skipReasons are the reasons, in the order the legends list them.
var skipReasons = []skipReason{
	{"overrun", "O", "it came while an invocation of the job had not ended, and the job's overlap policy did not run it (under queue_one, a newer occurrence took its place in the queue)"},
	{"missed", "M", "it was found due later than the job's catch-up window allows: Sundial was down, or its tick came too late"},
	{"superseded", "S", "it was found due late together with later occurrences, and catch-up ran only the latest of them in its place"},
	{"paused", "P", "it fell while the job was paused"},
	{"disabled", "D", "it was due, or waiting its turn, when the job was disabled"},
	{"dst_gap", "G", "its wall-clock time did not exist that day (the clocks sprang forward) and the job's dst_gap policy is skip"},
	{"calendar", "C", "its day is one the job's calendars remove: a day of a calendar it skips (skip_calendars), or of none of those it runs only on (only_calendars)"},
}

// reasonOf is a skip reason by its name; an unknown one (a newer
// release's) is marked ? and said as it is.
func reasonOf(reason string) skipReason {
	for _, r := range skipReasons {
		if r.Reason == reason {
			return r
		}
	}
	return skipReason{Reason: reason, Letter: "?", Means: "a reason this release of the console does not know"}
}

// explainSkip says what a skip record's reason means; "" for an
// invocation that is not one.
func explainSkip(inv *store.InvocationRecord) string {
	if inv.Status != "SKIPPED" {
		return ""
	}
	return reasonOf(inv.Reason).Means
}

// letter is the letter a strip's or grid's cell carries beside its colour:
// X failed, A aborted, R queued or running, a skip's reason letter; none
// for a success, the commonest.
func letter(inv *store.InvocationRecord) string {
	switch outcome(inv.Status) {
	case "fail":
		return "X"
	case "abort":
		return "A"
	case "run":
		return "R"
	case "skip":
		return reasonOf(inv.Reason).Letter
	}
	return ""
}
