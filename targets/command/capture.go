package command

import (
	"fmt"
	"sync"
)

// capture keeps the head and the tail of a stream of output in bounded
// memory: the head says how a command started, the tail how it ended.
type capture struct {
	mu               sync.Mutex
	headMax, tailMax int
	head, tail       []byte
	dropped          int64 // bytes trimmed from the tail
}

func newCapture(limit int) *capture {
	half := limit / 2
	return &capture{headMax: half, tailMax: limit - half}
}

// Write never fails, so a command's output pipe never blocks on it.
func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	if room := c.headMax - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	c.tail = append(c.tail, p...)
	// Trim only when the tail has doubled, so each byte is copied O(1)
	// times however small the writes.
	if over := len(c.tail) - c.tailMax; over > c.tailMax {
		c.dropped += int64(over)
		c.tail = append(c.tail[:0], c.tail[over:]...)
	}
	return n, nil
}

// Dropped is how many bytes of the stream so far Bytes leaves out.
func (c *capture) Dropped() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped + int64(max(0, len(c.tail)-c.tailMax))
}

// Bytes returns the head, a marker saying how much was dropped (if any),
// and the tail.
func (c *capture) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail, dropped := c.tail, c.dropped
	if over := len(tail) - c.tailMax; over > 0 {
		dropped += int64(over)
		tail = tail[over:]
	}
	out := append([]byte(nil), c.head...)
	if dropped > 0 {
		out = fmt.Appendf(out, "\n[... %d bytes of output dropped ...]\n", dropped)
	}
	return append(out, tail...)
}
