package cli

import "testing"

// A follower prints each byte of the log's stream once: the new end of
// the log while nothing was dropped, the new end of its tail once the
// server drops its middle, and, when more was written between two reads
// than the tail holds, how much it never saw.
func TestNewInLogPrintsEachByteOnce(t *testing.T) {
	const marker = "\n[... 10 bytes dropped ...]\n"
	for _, tc := range []struct {
		name    string
		v       cliInvocation
		printed int
		want    string
	}{
		{"the first read", cliInvocation{Log: "ab\n", LogWritten: 3, LogTail: 3}, 0, "ab\n"},
		{"a read with more", cliInvocation{Log: "ab\ncd\n", LogWritten: 6, LogTail: 6}, 3, "cd\n"},
		{"a read with nothing new", cliInvocation{Log: "ab\ncd\n", LogWritten: 6, LogTail: 6}, 6, ""},
		{"the middle dropped, the new bytes in the tail", cliInvocation{Log: "head" + marker + "tail", LogWritten: 18, LogTail: 4}, 16, "il"},
		{"more written than the tail holds", cliInvocation{Log: "head" + marker + "tail", LogWritten: 18, LogTail: 4}, 6, "[... 8 bytes dropped by the server before they were read ...]\ntail"},
		{"an answer that does not add up", cliInvocation{Log: "ab", LogWritten: 9, LogTail: 5}, 0, ""},
	} {
		if got := newInLog(tc.v, tc.printed); got != tc.want {
			t.Errorf("%s: %q; want %q", tc.name, got, tc.want)
		}
	}
}
