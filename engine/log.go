package engine

import (
	"bytes"
	"fmt"
	"strconv"
)

// An invocation's debug log keeps its head and its tail: the head says how
// it started, the tail how it ended, and a marker between them says how
// much was dropped.
const (
	markerOpen  = "\n[... "
	markerClose = " bytes dropped ...]\n"
)

// appendLog appends add to log, keeping at most limit bytes of content:
// the first limit/2 bytes ever written and the latest limit-limit/2.
func appendLog(log, add []byte, limit int) []byte {
	half := limit / 2
	head, dropped, tail := splitLog(log, limit)
	tail = append(tail, add...)
	if dropped == 0 && len(tail) <= limit {
		return tail
	}
	if dropped == 0 {
		// First overflow: the head is the first half of the log so far.
		head, tail = tail[:half], tail[half:]
	}
	if over := len(tail) - (limit - half); over > 0 {
		dropped += over
		tail = tail[over:]
	}
	out := make([]byte, 0, limit+len(markerOpen)+len(markerClose)+20)
	out = append(out, head...)
	out = fmt.Appendf(out, "%s%d%s", markerOpen, dropped, markerClose)
	return append(out, tail...)
}

// splitLog undoes appendLog's layout: the head, how many bytes were dropped,
// and the tail (all of the log if nothing was dropped). The marker is looked
// for only right after the head, so output that happens to contain marker
// text is never mistaken for it; and only in a log whose tail has the length
// appendLog gives it, because a log nothing was dropped from is raw output,
// which may hold marker text right after its first limit/2 bytes.
func splitLog(log []byte, limit int) (head []byte, dropped int, tail []byte) {
	half := limit / 2
	if len(log) > half && bytes.HasPrefix(log[half:], []byte(markerOpen)) {
		rest := log[half+len(markerOpen):]
		if j := bytes.Index(rest, []byte(markerClose)); j > 0 && len(rest)-j-len(markerClose) == limit-half {
			if n, err := strconv.Atoi(string(rest[:j])); err == nil && n > 0 {
				return log[:half], n, bytes.Clone(rest[j+len(markerClose):])
			}
		}
	}
	return nil, 0, bytes.Clone(log)
}

// LogExtent is how many bytes were ever written to an invocation's log,
// kept under the engine's LogLimit: what it holds, and what it dropped
// between its head and its tail; and how many of its last bytes are the
// latest written, without a gap (all of it while nothing was dropped).
// Whoever follows a growing log tells its new bytes by them, also once
// its middle is being dropped.
func (e *Engine) LogExtent(log []byte) (written, tail int) {
	head, dropped, t := splitLog(log, e.opts.LogLimit)
	return len(head) + dropped + len(t), len(t)
}
