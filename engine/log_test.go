package engine

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// marker is the text appendLog puts where n bytes were dropped.
func marker(n int) string { return fmt.Sprintf("%s%d%s", markerOpen, n, markerClose) }

// modelLog is what the debug log of a stream of output must read: the whole
// stream while it fits in limit bytes, and otherwise its first limit/2
// bytes, the marker, and its latest limit-limit/2 bytes (limit/2 for an
// even limit), so that exactly len(stream)-limit bytes are dropped.
func modelLog(stream []byte, limit int) []byte {
	if len(stream) <= limit {
		return stream
	}
	half := limit / 2
	out := bytes.Clone(stream[:half])
	out = append(out, marker(len(stream)-limit)...)
	return append(out, stream[len(stream)-(limit-half):]...)
}

func TestAppendLog(t *testing.T) {
	// fake is output that reads like a marker sitting right after a head.
	fake := marker(5)
	for _, tc := range []struct {
		name    string
		limit   int
		appends []string
		want    string
	}{
		{
			name:    "under the limit the appends are concatenated",
			limit:   10,
			appends: []string{"abc", "", "def"},
			want:    "abcdef",
		},
		{
			name:    "exactly the limit is kept whole",
			limit:   10,
			appends: []string{"abcde", "fghij"},
			want:    "abcdefghij",
		},
		{
			name:    "the first overflow drops the middle",
			limit:   10,
			appends: []string{"abcdefghij", "k"},
			want:    "abcde" + marker(1) + "ghijk",
		},
		{
			name:    "many appends keep the first and the latest halves and count what fell between",
			limit:   8,
			appends: []string{"ab", "cd", "ef", "gh", "ij", "kl", "mn", "o", "", "pqr"},
			want:    "abcd" + marker(10) + "opqr",
		},
		{
			name:    "an append larger than the limit into an empty log",
			limit:   6,
			appends: []string{"0123456789"},
			want:    "012" + marker(4) + "789",
		},
		{
			name:    "an append larger than the limit into a short log",
			limit:   6,
			appends: []string{"xy", "0123456789"},
			want:    "xy0" + marker(6) + "789",
		},
		{
			name:    "an append larger than the limit into a truncated log",
			limit:   6,
			appends: []string{"abcdefgh", "0123456789"},
			want:    "abc" + marker(12) + "789",
		},
		{
			name:    "marker text in the tail is output, not a marker",
			limit:   80,
			appends: []string{strings.Repeat("h", 50), strings.Repeat("x", 40), fake + "tail", "!"},
			want:    strings.Repeat("h", 40) + marker(42) + strings.Repeat("x", 8) + fake + "tail!",
		},
		{
			name:    "marker text in the head is output, not a marker",
			limit:   80,
			appends: []string{"ab" + fake, strings.Repeat("t", 70)},
			want:    "ab" + fake + strings.Repeat("t", 11) + marker(len(fake)+72-80) + strings.Repeat("t", 40),
		},
		{
			// Before anything is dropped the log is the raw output; marker
			// text at the head's end must not make appendLog believe bytes
			// were dropped.
			name:    "marker text right after the head of an untruncated log is output",
			limit:   60,
			appends: []string{strings.Repeat("a", 30) + fake, "b", strings.Repeat("c", 10)},
			want:    strings.Repeat("a", 30) + marker(8) + fake[8:] + "b" + strings.Repeat("c", 10),
		},
		{
			name:    "an odd limit keeps limit/2 bytes of head and the rest of tail",
			limit:   7,
			appends: []string{"abcde", "fghij"},
			want:    "abc" + marker(3) + "ghij",
		},
		{
			name:    "a limit of 1 keeps only the last byte",
			limit:   1,
			appends: []string{"ab", "c", "def"},
			want:    marker(5) + "f",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log, stream []byte
			for _, a := range tc.appends {
				log = appendLog(log, []byte(a), tc.limit)
				stream = append(stream, a...)
			}
			if string(log) != tc.want {
				t.Errorf("log = %q\nwant  %q", log, tc.want)
			}
			// The table's wants are written out by hand; the model must
			// agree with them, or one of the two is wrong.
			if model := modelLog(stream, tc.limit); string(model) != tc.want {
				t.Errorf("model = %q\nwant    %q", model, tc.want)
			}
		})
	}
}

func TestAppendLogLeavesItsInputAlone(t *testing.T) {
	log := []byte("abcdefgh")
	add := []byte("ijkl")
	appendLog(log[:4:8], add, 6)
	appendLog(log, add, 100)
	if string(log) != "abcdefgh" || string(add) != "ijkl" {
		t.Errorf("the inputs changed: log %q, add %q", log, add)
	}
}

// FuzzAppendLog feeds appendLog a stream cut into appends and compares every
// intermediate log with the model, which keeps the whole stream.
func FuzzAppendLog(f *testing.F) {
	f.Add(uint8(10), []byte("hello, world: this is a longer line of output"), []byte{3, 0, 7, 20, 1})
	f.Add(uint8(1), []byte("abc"), []byte{1, 1, 1})
	f.Add(uint8(61), []byte(strings.Repeat("a", 30)+marker(5)+"bcccccccccc"), []byte{57, 1, 10})
	f.Add(uint8(40), []byte(strings.Repeat("h", 20)+marker(7)+"tail"+marker(123)), []byte{25, 9, 30})
	f.Fuzz(func(t *testing.T, limit uint8, stream, cuts []byte) {
		if limit == 0 {
			return // the engine never uses a zero limit
		}
		var log []byte
		rest := stream
		for i := 0; len(rest) > 0 || i < len(cuts); i++ {
			n := len(rest)
			if i < len(cuts) {
				n = min(int(cuts[i]), len(rest))
			}
			log = appendLog(log, rest[:n], int(limit))
			rest = rest[n:]
			written := stream[:len(stream)-len(rest)]
			if want := modelLog(written, int(limit)); !bytes.Equal(log, want) {
				t.Fatalf("limit %d, after %d bytes in %d appends:\nlog  %q\nwant %q", limit, len(written), i+1, log, want)
			}
		}
	})
}

// TestLogExtentCountsWhatWasDropped: a log's written size is the length
// of the whole stream appended to it, and its tail the stream's latest
// bytes, before and after its middle starts being dropped.
func TestLogExtentCountsWhatWasDropped(t *testing.T) {
	e := &Engine{opts: Options{LogLimit: 16}}
	var log, stream []byte
	for i := range 12 {
		add := []byte(fmt.Sprintf("line %d\n", i))
		log, stream = appendLog(log, add, 16), append(stream, add...)
		written, tail := e.LogExtent(log)
		if written != len(stream) || tail > len(log) || !bytes.HasSuffix(stream, log[len(log)-tail:]) {
			t.Fatalf("after %d lines LogExtent = %d, %d; want %d and a tail the stream ends with (log %q)", i+1, written, tail, len(stream), log)
		}
		if len(stream) <= 16 && tail != len(log) {
			t.Fatalf("after %d lines the tail is %d bytes; want the whole log, %d, as nothing was dropped", i+1, tail, len(log))
		}
	}
}
