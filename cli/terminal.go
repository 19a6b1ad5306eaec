package cli

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// inert passes text from a server to a terminal with its control
// characters made visible (ESC as \x1b, a C1 CSI as \u009b), line breaks
// and tabs aside: a commit subject, an author, a reason or an error is
// written by whoever can push to a config repo or call the API, and
// escape sequences in it would move the cursor, rewrite what the operator
// reads, set the clipboard (OSC 52) or hide a link (OSC 8).
type inert struct {
	w     io.Writer
	carry []byte // the start of a character a write cut off
}

func (t *inert) Write(p []byte) (int, error) {
	n := len(p)
	b := append(t.carry, p...)
	t.carry = nil
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 && !utf8.FullRune(b) {
			t.carry = append([]byte(nil), b...)
			break
		}
		switch {
		case r == '\n' || r == '\t':
			out = append(out, b[0])
		case r < 0x20 || r == 0x7f:
			out = fmt.Appendf(out, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f:
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return n, nil
}
