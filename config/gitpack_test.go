package config

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// testPack is a pack made by hand: what a hostile remote may send.
type testPack struct {
	count   uint32 // the count its header says
	entries bytes.Buffer
}

// add appends an object of type typ (3 a blob, 6 an offset delta) whose
// header says size, and whose data is content deflated; base is how far
// back a delta's base starts.
func (p *testPack) add(typ byte, size uint64, base int, content []byte) int {
	offset := 12 + p.entries.Len()
	b := typ<<4 | byte(size&0x0f)
	for size >>= 4; size > 0; size >>= 7 {
		p.entries.WriteByte(b | 0x80)
		b = byte(size & 0x7f)
	}
	p.entries.WriteByte(b)
	if typ == 6 {
		p.entries.WriteByte(byte(base)) // a back offset under 128 is one byte
	}
	z := zlib.NewWriter(&p.entries)
	z.Write(content)
	z.Close()
	return offset
}

func (p *testPack) chunks() *chunks {
	var b bytes.Buffer
	b.WriteString("PACK")
	binary.Write(&b, binary.BigEndian, [2]uint32{2, p.count})
	b.Write(p.entries.Bytes())
	b.Write(make([]byte, 20)) // the checksum, which checkPack leaves to the parser
	c, err := readPack(&b, 1<<30)
	if err != nil {
		panic(err)
	}
	return c
}

// TestCheckPackRefusesWhatTheHeadersSayBeforeInflatingIt: each refusal is
// decided from a header, before the object it describes is inflated:
// an object count whose cost alone passes the bound (with no object
// there at all), one object larger than the bound, objects larger
// together, and a delta building an object larger than the bound.
func TestCheckPackRefusesWhatTheHeadersSayBeforeInflatingIt(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	millions := &testPack{count: 1 << 24}

	huge := &testPack{count: 2}
	huge.add(3, 3, 0, []byte("abc"))
	huge.add(3, 1<<40, 0, nil) // says a terabyte, holds nothing

	together := &testPack{count: 3}
	for range 3 {
		together.add(3, 400<<10, 0, make([]byte, 400<<10))
	}

	delta := &testPack{count: 2}
	at := delta.add(3, 3, 0, []byte("abc"))
	// A delta from the 3-byte base to an object of a terabyte: the sizes
	// in base-128, then nothing to build it with.
	delta.add(6, 7, 12+delta.entries.Len()-at, []byte{3, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20})

	for _, c := range []struct {
		name string
		pack *testPack
		says string
	}{
		{"millions of objects", millions, "(1048576 bytes): the pack holds 16777216 objects"},
		{"an object past the bound", huge, "(1048576 bytes): a blob of 1099511627776 bytes"},
		{"objects past the bound together", together, "(1048576 bytes): the objects together, at a blob of 409600 bytes"},
		{"a delta building an object past the bound", delta, "(1048576 bytes): a delta building an object of 1099511627776 bytes"},
	} {
		err := checkPack(c.pack.chunks(), limit)
		if !errors.Is(err, ErrRepoTooLarge) || !strings.HasSuffix(err.Error(), c.says) {
			t.Errorf("%s: %v; want ErrRepoTooLarge saying %q", c.name, err, c.says)
		}
	}
}

// TestCheckPackRefusesAnObjectInflatingPastItsHeader: an object whose
// header says 10 bytes and whose data inflates to a mebibyte is refused
// at the eleventh.
func TestCheckPackRefusesAnObjectInflatingPastItsHeader(t *testing.T) {
	t.Parallel()
	lying := &testPack{count: 1}
	lying.add(3, 10, 0, make([]byte, 1<<20))
	if err := checkPack(lying.chunks(), 1<<30); !errors.Is(err, packfile.ErrInflatedSizeMismatch) {
		t.Errorf("checkPack: %v; want %v", err, packfile.ErrInflatedSizeMismatch)
	}
}

// TestReadPackReadsAPackInPiecesWhole: a pack read in pieces reads back
// as the bytes sent, from any offset across the pieces, and one past the
// bound is refused.
func TestReadPackReadsAPackInPiecesWhole(t *testing.T) {
	t.Parallel()
	sent := make([]byte, 2*packChunk+100)
	for i := range sent {
		sent[i] = byte(i * 7)
	}
	c, err := readPack(bytes.NewReader(sent), int64(len(sent)))
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range []int64{0, packChunk - 3, 2*packChunk - 1, int64(len(sent)) - 10} {
		got := make([]byte, 10)
		if n, err := c.ReadAt(got, off); n != 10 || err != nil || !bytes.Equal(got, sent[off:off+10]) {
			t.Errorf("at %d: %d bytes %x, %v; want %x", off, n, got, err, sent[off:off+10])
		}
	}
	if _, err := readPack(bytes.NewReader(sent), int64(len(sent))-1); !errors.Is(err, ErrRepoTooLarge) {
		t.Errorf("a pack one byte past the bound: %v; want ErrRepoTooLarge", err)
	}
}
