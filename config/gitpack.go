package config

import (
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// objectCost is what one object of a pack costs in memory beyond its
// bytes: the parser's record of it and its entry in the pack's index (about
// 500 bytes, measured with 100,000 objects). Each object is counted at this
// much more than its size, so that a pack of millions of empty objects is
// refused as one huge object is.
const objectCost = 512

// unpack reads a fetched pack, at most limit bytes, and indexes it, once
// its objects' headers have said they inflate to at most limit bytes
// together: no object is inflated before the sizes of those before it are
// known to be within the bound, and none past the size its header says.
// The objects stay packed, each inflated when it is read, so that what a
// Read holds is the pack, its index and the objects it reads, and at the
// worst, while the pack is indexed, its largest object too: twice limit.
func unpack(r io.Reader, limit int64) (*packObjects, error) {
	pack, err := readPack(r, limit)
	if err != nil {
		return nil, err
	}
	if err := checkPack(pack, limit); err != nil {
		return nil, err
	}
	var idx idxfile.Writer
	parser, err := packfile.NewParser(packfile.NewScanner(pack.reader()), &idx)
	if err != nil {
		return nil, err
	}
	if _, err = parser.Parse(); err != nil {
		return nil, err
	}
	index, err := idx.Index()
	if err != nil {
		return nil, err
	}
	return &packObjects{packfile.NewPackfile(index, nil, packFile{pack.reader()}, 0)}, nil
}

// packChunk is the size of the pieces a pack is read in: a pack in
// pieces is never copied as it grows, so it costs its size and no more.
const packChunk = 1 << 20

// readPack reads r whole, or fails past limit bytes.
func readPack(r io.Reader, limit int64) (*chunks, error) {
	c := &chunks{}
	for {
		if c.size%packChunk == 0 {
			c.b = append(c.b, make([]byte, packChunk))
		}
		last := c.b[len(c.b)-1]
		n, err := r.Read(last[c.size%packChunk:])
		if c.size += int64(n); c.size > limit {
			return nil, packTooLarge(limit, "the pack is larger")
		}
		if errors.Is(err, io.EOF) {
			c.b[len(c.b)-1] = last[:c.size-int64(len(c.b)-1)*packChunk]
			return c, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// chunks are a pack read in pieces of packChunk bytes, the last one
// shorter.
type chunks struct {
	b    [][]byte
	size int64
}

// ReadAt reads the pack as one run of bytes.
func (c *chunks) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("a negative offset in a pack")
	}
	n := 0
	for n < len(p) && off < c.size {
		m := copy(p[n:], c.b[off/packChunk][off%packChunk:])
		n += m
		off += int64(m)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// reader reads the pack from its start.
func (c *chunks) reader() *io.SectionReader { return io.NewSectionReader(c, 0, c.size) }

// checkPack reads the header of each object of a pack, and refuses the
// pack as soon as the sizes they declare, with objectCost each, pass
// limit. The pack's object count is checked first, before anything is
// inflated; an object is inflated only to be skipped, no further than its
// header says, and only once its size is known to fit; a delta's
// instructions and the object they build both count.
func checkPack(pack *chunks, limit int64) error {
	s := packfile.NewScanner(pack.reader())
	_, count, err := s.Header()
	if err != nil {
		return err
	}
	total := int64(count) * objectCost
	if total > limit {
		return packTooLarge(limit, "the pack holds %d objects", count)
	}
	for range count {
		h, err := s.NextObjectHeader()
		if err != nil {
			return err
		}
		if total += h.Length; total > limit {
			return packTooLarge(limit, "%s", passed(objectSize(h.Type, h.Length), h.Length, limit))
		}
		if !h.Type.IsDelta() {
			if _, _, err := s.NextObject(io.Discard); err != nil {
				return err
			}
			continue
		}
		var d deltaHead
		if _, _, err := s.NextObject(&d); err != nil {
			return err
		}
		target, ok := d.targetSize()
		if !ok {
			return fmt.Errorf("%w: a delta's sizes are unreadable", packfile.ErrMalformedPackFile)
		}
		if total += target; total > limit {
			return packTooLarge(limit, "%s", passed(fmt.Sprintf("a delta building an object of %d bytes", target), target, limit))
		}
	}
	return nil
}

// objectSize names an object of a pack by its type and size.
func objectSize(t plumbing.ObjectType, size int64) string {
	if t.IsDelta() {
		return fmt.Sprintf("a delta of %d bytes", size)
	}
	return fmt.Sprintf("a %s of %d bytes", t, size)
}

// passed says what passed the bound: an object alone, or the objects
// together when one of them brought their sum past it.
func passed(object string, size, limit int64) string {
	if size > limit {
		return object
	}
	return "the objects together, at " + object
}

func packTooLarge(limit int64, format string, args ...any) error {
	return fmt.Errorf("%w (%d bytes): "+format, append([]any{ErrRepoTooLarge, limit}, args...)...)
}

// deltaHead keeps the first bytes of a delta, which are the sizes of its
// base and of the object it builds, each a little-endian base-128 number.
type deltaHead struct {
	b [20]byte
	n int
}

func (d *deltaHead) Write(p []byte) (int, error) {
	d.n += copy(d.b[d.n:], p)
	return len(p), nil
}

// targetSize is the size of the object the delta builds.
func (d *deltaHead) targetSize() (int64, bool) {
	b := d.b[:d.n]
	var sizes [2]uint64
	for i := range sizes {
		for shift := 0; ; shift += 7 {
			if len(b) == 0 || shift > 56 {
				return 0, false
			}
			c := b[0]
			b = b[1:]
			sizes[i] |= uint64(c&0x7f) << shift
			if c&0x80 == 0 {
				break
			}
		}
	}
	return int64(sizes[1]), true
}
