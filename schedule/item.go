package schedule

import (
	"fmt"
	"strings"
)

// parseItem parses one element of a comma-separated cron field.
func (s *Schedule) parseItem(k fieldKind, tok string) (item, error) {
	info := &fieldInfo[k]
	lo, hi := info.lo, info.hi
	if k == fDow {
		hi = 6 // * and H mean Sunday to Saturday once; 7 is only an alias
	}
	if tok == "" {
		return item{}, fmt.Errorf("empty element in a list")
	}
	body, stepText, hasStep := strings.Cut(tok, "/")
	var it item
	switch {
	case body == "*" || body == "?":
		if body == "?" && k != fDom && k != fDow {
			return item{}, fmt.Errorf("? is only allowed in day of month and day of week")
		}
		it = item{op: opRange, lo: lo, hi: hi, star: true}
	case strings.HasPrefix(body, "H"):
		return s.parseHash(k, body, stepText, hasStep)
	case k == fDom && (strings.HasPrefix(body, "L") || strings.HasSuffix(body, "W")):
		if hasStep {
			return item{}, fmt.Errorf("%q: a step is not allowed with L or W", tok)
		}
		return parseDomSpecial(body)
	case k == fDow && (strings.HasSuffix(body, "L") || strings.Contains(body, "#")):
		if hasStep {
			return item{}, fmt.Errorf("%q: a step is not allowed with L or #", tok)
		}
		return parseDowSpecial(body)
	default:
		a, b, isRange := strings.Cut(body, "-")
		if isRange && (a == "" || b == "" || strings.Contains(b, "-")) {
			return item{}, fmt.Errorf("range %q needs a value on each side of the -, e.g. %d-%d", body, lo, hi)
		}
		v, err := parseValue(k, a)
		if err != nil {
			return item{}, err
		}
		it = item{op: opRange, lo: v, hi: v}
		switch {
		case isRange:
			if it.hi, err = parseValue(k, b); err != nil {
				return item{}, err
			}
			if it.hi < it.lo {
				return item{}, backwards(k, body, a, b, it.lo)
			}
		case hasStep:
			// a/n: from a to the end of the field. Day of week ends at 6,
			// so 7/n (7 is Sunday too) is Sunday alone, not nothing.
			it.hi = max(hi, it.lo)
		}
	}
	it.step = 1
	if hasStep {
		n, err := parseStep(stepText, hi-lo)
		if err != nil {
			return item{}, err
		}
		it.step = n
	}
	return it, nil
}

// backwards explains a range a-b that wraps past the end of field k, and
// spells it as the list the user meant, in names if the range used names.
func backwards(k fieldKind, body, a, b string, lo int) error {
	info := fieldInfo[k]
	if k == fDow && lo == 7 {
		return fmt.Errorf("range %s is backwards; 7 is Sunday, write 0-%s", body, b)
	}
	hi := info.hi
	if k == fDow {
		hi = 6 // 7 is only an alias of Sunday, which the second range starts with
	}
	end, start := fmt.Sprint(hi), fmt.Sprint(info.lo)
	if _, num := atoi(a); !num {
		end = info.names[hi]
	}
	if _, num := atoi(b); !num {
		start = info.names[info.lo]
	}
	return fmt.Errorf("range %s is backwards; write it as a list, e.g. %s-%s,%s-%s", body, a, end, start, b)
}

func parseStep(text string, max int) (int, error) {
	n, ok := atoi(text)
	if !ok {
		return 0, fmt.Errorf("step %q is not a number", text)
	}
	if n < 1 || n > max {
		return 0, fmt.Errorf("step %s is out of range 1-%d", text, max)
	}
	return n, nil
}

// parseValue parses a number or, where the field has them, a name.
func parseValue(k fieldKind, text string) (int, error) {
	info := &fieldInfo[k]
	for v, name := range info.names {
		if name != "" && strings.EqualFold(text, name) {
			return v, nil
		}
	}
	n, ok := atoi(text)
	if !ok {
		switch k {
		case fMonth:
			return 0, fmt.Errorf("%q is not a month name (JAN-DEC) or number 1-12", text)
		case fDow:
			return 0, fmt.Errorf("%q is not a day name (SUN-SAT) or number 0-7", text)
		}
		return 0, fmt.Errorf("%q is not a number %d-%d", text, info.lo, info.hi)
	}
	if n < info.lo || n > info.hi {
		return 0, fmt.Errorf("%s is out of range %d-%d", text, info.lo, info.hi)
	}
	return n, nil
}

// atoi accepts only decimal digits: no sign, no spaces. It saturates instead
// of overflowing, so the range check still names an absurdly long number.
func atoi(text string) (int, bool) {
	if text == "" {
		return 0, false
	}
	n := 0
	for _, r := range text {
		if r < '0' || r > '9' {
			return 0, false
		}
		if n < 1<<30 {
			n = n*10 + int(r-'0')
		}
	}
	return n, true
}

// parseDomSpecial parses L, L-n, LW and nW of the day-of-month field.
func parseDomSpecial(body string) (item, error) {
	switch {
	case body == "L":
		return item{op: opLastDay}, nil
	case body == "LW":
		return item{op: opLastWeekday}, nil
	case strings.HasPrefix(body, "L-"):
		n, ok := atoi(body[2:])
		if !ok || n < 1 || n > 30 {
			return item{}, fmt.Errorf("%q: expected L-1 to L-30 (days before the last day of the month)", body)
		}
		return item{op: opLastDay, n: n}, nil
	case strings.HasSuffix(body, "W"):
		n, ok := atoi(strings.TrimSuffix(body, "W"))
		if !ok || n < 1 || n > 31 {
			return item{}, fmt.Errorf("%q: expected 1W to 31W (the weekday nearest a day) or LW", body)
		}
		return item{op: opNearest, n: n}, nil
	}
	return item{}, fmt.Errorf("%q: expected L, L-n, LW or nW", body)
}

// parseDowSpecial parses nL (the last weekday n of the month) and n#k (the
// k-th weekday n of the month) of the day-of-week field.
func parseDowSpecial(body string) (item, error) {
	if w, ok := strings.CutSuffix(body, "L"); ok {
		if w == "" {
			return item{}, fmt.Errorf("L in day of week needs a weekday before it, e.g. 5L or FRIL for the last Friday of the month")
		}
		v, err := parseValue(fDow, w)
		if err != nil {
			return item{}, err
		}
		return item{op: opLastDow, lo: v % 7}, nil
	}
	w, k, _ := strings.Cut(body, "#")
	if w == "" {
		return item{}, fmt.Errorf("%q: # needs a weekday before it, e.g. MON#2 for the second Monday of the month", body)
	}
	v, err := parseValue(fDow, w)
	if err != nil {
		return item{}, err
	}
	n, ok := atoi(k)
	if !ok || n < 1 || n > 5 {
		return item{}, fmt.Errorf("%q: expected #1 to #5 after the weekday", body)
	}
	return item{op: opNth, lo: v % 7, n: n}, nil
}

// parseHash parses H, H(a-b), H/n and H(a-b)/n: values derived from the job
// id, so that many jobs written "H * * * *" spread over the hour.
func (s *Schedule) parseHash(k fieldKind, body, stepText string, hasStep bool) (item, error) {
	info := fieldInfo[k]
	lo, hi := info.lo, info.hi
	switch k {
	case fYear:
		return item{}, fmt.Errorf("H is not allowed in the year field")
	case fDow:
		hi = 6 // 7 is only an alias of Sunday
	case fDom:
		if !hasStep && body == "H" {
			hi = 28 // a hashed day of month exists in every month
		}
	}
	if rest := body[1:]; rest != "" {
		inner, ok := strings.CutPrefix(rest, "(")
		inner, ok2 := strings.CutSuffix(inner, ")")
		a, b, isRange := strings.Cut(inner, "-")
		if !ok || !ok2 || !isRange {
			return item{}, fmt.Errorf("%q: expected H, H(a-b), H/n or H(a-b)/n", body)
		}
		var err error
		if lo, err = parseValue(k, a); err != nil {
			return item{}, err
		}
		if hi, err = parseValue(k, b); err != nil {
			return item{}, err
		}
		if hi < lo {
			return item{}, fmt.Errorf("range %s-%s in %s is backwards", a, b, body)
		}
	}
	if s.jobID == "" {
		return item{}, fmt.Errorf("H needs a job id to derive its value from")
	}
	h := hashValue(s.jobID, k)
	if !hasStep {
		v := lo + int(h%uint64(hi-lo+1))
		return item{op: opRange, lo: v, hi: v, step: 1, hashed: true}, nil
	}
	// The largest step is the same as for */n: the span of the whole field.
	maxStep := info.hi - info.lo
	if k == fDow {
		maxStep = 6
	}
	step, err := parseStep(stepText, maxStep)
	if err != nil {
		return item{}, err
	}
	start := lo + int(h%uint64(min(step, hi-lo+1)))
	return item{op: opRange, lo: start, hi: hi, step: step, hashed: true}, nil
}

// hashValue derives a stable 64-bit value from a job id and a field: FNV-1a
// of both, then the splitmix64 finaliser so nearby ids land far apart. It is
// persisted in effect (it decides when jobs fire), so it must never change.
func hashValue(jobID string, k fieldKind) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(jobID); i++ {
		h ^= uint64(jobID[i])
		h *= 1099511628211
	}
	h ^= uint64(k) + 1
	h *= 1099511628211
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}
