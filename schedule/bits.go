package schedule

import "math/bits"

// The fields of a cron schedule are bit sets: bit v is set when value v
// matches. Finding the next matching value is one mask and one count of
// trailing zeros, which is what keeps Next free of minute-by-minute search.

// nextBit returns the smallest set bit >= from.
func nextBit(set uint64, from int) (int, bool) {
	if from >= 64 {
		return 0, false
	}
	if from < 0 {
		from = 0
	}
	m := set & (^uint64(0) << uint(from))
	if m == 0 {
		return 0, false
	}
	return bits.TrailingZeros64(m), true
}

// prevBit returns the largest set bit <= from.
func prevBit(set uint64, from int) (int, bool) {
	if from < 0 {
		return 0, false
	}
	if from > 63 {
		from = 63
	}
	m := set & (^uint64(0) >> uint(63-from))
	if m == 0 {
		return 0, false
	}
	return 63 - bits.LeadingZeros64(m), true
}

// span returns the set of values lo..hi stepping by step. A step of 1, the
// common case (* and plain ranges), is a mask: no loop.
func span(lo, hi, step int) uint64 {
	if step == 1 {
		return (uint64(1)<<uint(hi+1) - 1) &^ (uint64(1)<<uint(lo) - 1)
	}
	var s uint64
	for v := lo; v <= hi; v += step {
		s |= 1 << uint(v)
	}
	return s
}

// yearSet holds the years 1970..2199 of a 7-field schedule.
type yearSet [4]uint64

func (s *yearSet) add(y int) { s[(y-minYear)/64] |= 1 << uint((y-minYear)%64) }
func (s *yearSet) has(y int) bool {
	return y >= minYear && y <= maxYear && s[(y-minYear)/64]&(1<<uint((y-minYear)%64)) != 0
}
