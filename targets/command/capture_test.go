package command

import (
	"bytes"
	"fmt"
	"testing"
)

func TestCaptureKeepsHeadAndTail(t *testing.T) {
	t.Parallel()
	stream := []byte("0123456789abcdefghijklmnopqrstuvwxyz")
	for _, tc := range []struct {
		name   string
		limit  int
		chunks []int // sizes of successive writes; the rest in one
		want   string
	}{
		{"all of a short stream", 100, nil, string(stream)},
		{"a stream of exactly the limit whole", len(stream), nil, string(stream)},
		{"a longer stream in one write", 10, nil, "01234\n[... 26 bytes of output dropped ...]\nvwxyz"},
		{"a longer stream byte by byte", 10, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, "01234\n[... 26 bytes of output dropped ...]\nvwxyz"},
		{"a write that straddles the head", 10, []int{3, 20}, "01234\n[... 26 bytes of output dropped ...]\nvwxyz"},
		{"an odd limit gives the tail the extra byte", 11, []int{7, 7, 7}, "01234\n[... 25 bytes of output dropped ...]\nuvwxyz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCapture(tc.limit)
			rest := stream
			for _, n := range tc.chunks {
				if n, err := c.Write(rest[:n]); err != nil || n != len(rest[:n]) {
					t.Fatalf("Write = %d, %v", n, err)
				}
				rest = rest[n:]
			}
			c.Write(rest)
			if got := c.Bytes(); string(got) != tc.want {
				t.Errorf("Bytes() = %q; want %q", got, tc.want)
			}
		})
	}
}

// However the stream is cut, the capture holds at most the limit of its
// content, and the head and tail are the stream's own.
func TestCaptureIsBoundedForAnyChunking(t *testing.T) {
	t.Parallel()
	stream := bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog\n"), 500)
	for _, limit := range []int{1, 2, 64, 1000} {
		for _, chunk := range []int{1, 7, 100, len(stream)} {
			t.Run(fmt.Sprintf("limit %d in writes of %d", limit, chunk), func(t *testing.T) {
				t.Parallel()
				c := newCapture(limit)
				for rest := stream; len(rest) > 0; {
					n := min(chunk, len(rest))
					c.Write(rest[:n])
					rest = rest[n:]
				}
				head, tail := limit/2, limit-limit/2
				want := fmt.Sprintf("%s\n[... %d bytes of output dropped ...]\n%s", stream[:head], len(stream)-limit, stream[len(stream)-tail:])
				if got := c.Bytes(); string(got) != want {
					t.Errorf("Bytes() = %.60q...; want %.60q...", got, want)
				}
				if cap(c.tail) > 4*limit+2*chunk+16 {
					t.Errorf("the tail's buffer grew to %d bytes for a limit of %d", cap(c.tail), limit)
				}
			})
		}
	}
}
