package cli

import (
	"strings"
	"testing"
)

// What a server says reaches the terminal with its control characters
// made visible: cursor moves, OSC 52 clipboard writes and OSC 8 links,
// in C0 or C1 form, whole or cut between two writes.
func TestInertShowsControlCharacters(t *testing.T) {
	for _, c := range []struct {
		name   string
		writes []string
		want   string
	}{
		{"plain text, lines and tabs", []string{"p\t1\tAda <ada@example.com>\tp: a moves\n"}, "p\t1\tAda <ada@example.com>\tp: a moves\n"},
		{"a cursor move", []string{"fix\x1b[2Kcleared"}, `fix\x1b[2Kcleared`},
		{"a clipboard write", []string{"\x1b]52;c;Y3VybCBldmls\x07"}, `\x1b]52;c;Y3VybCBldmls\x07`},
		{"a hidden link", []string{"\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"}, `\x1b]8;;https://evil.example\x1b\click\x1b]8;;\x1b\`},
		{"a C1 CSI", []string{"a\u009b2Jb"}, `a\u009b2Jb`},
		{"a C1 CSI cut between writes", []string{"a\xc2", "\x9b2Jb"}, `a\u009b2Jb`},
		{"letters of other scripts", []string{"Zoë, 日本"}, "Zoë, 日本"},
	} {
		var b strings.Builder
		w := &inert{w: &b}
		for _, s := range c.writes {
			if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
				t.Fatalf("%s: Write = %d, %v", c.name, n, err)
			}
		}
		if b.String() != c.want {
			t.Errorf("%s: %q; want %q", c.name, b.String(), c.want)
		}
	}
}
