package config

import (
	"bytes"
	"fmt"
	"strings"
)

// Errors a person makes in YAML, said in words that help fix them: the
// YAML parser reports where it gave up, which for a line indented wrongly
// is often the start of the block it was reading, and for an unquoted
// @hourly a character it cannot start a token with.

// misindented returns the first line of data that dedents to a depth no
// open block uses (three spaces where the lines before it use two and
// four), with its indentation and the two depths it falls between; 0
// when there is none.
func misindented(data []byte) (line, indent, above, below int) {
	var open []int
	for i, text := range bytes.Split(data, []byte("\n")) {
		trimmed := bytes.TrimLeft(text, " ")
		if len(bytes.TrimSpace(trimmed)) == 0 || trimmed[0] == '#' {
			continue
		}
		ind := len(text) - len(trimmed)
		deeper := -1
		for len(open) > 0 && open[len(open)-1] > ind {
			open, deeper = open[:len(open)-1], open[len(open)-1]
		}
		if top := len(open) - 1; top >= 0 && deeper >= 0 && open[top] < ind {
			return i + 1, ind, open[top], deeper
		}
		if len(open) == 0 || open[len(open)-1] < ind {
			open = append(open, ind)
		}
		// A list item's keys continue one level deeper than its dash:
		// "- id: a" opens the depth of "id".
		if bytes.HasPrefix(trimmed, []byte("- ")) {
			rest := bytes.TrimLeft(trimmed[2:], " ")
			open = append(open, ind+len(trimmed)-len(rest))
		}
	}
	return 0, 0, 0, 0
}

// lineOf is line n (from 1) of data, without its line break.
func lineOf(data []byte, n int) string {
	lines := bytes.Split(data, []byte("\n"))
	if n < 1 || n > len(lines) {
		return ""
	}
	return string(bytes.TrimRight(lines[n-1], "\r"))
}

// syntaxHint says what a person most likely did at a line the YAML parser
// refused; "" when nothing better is known.
func syntaxHint(text string) string {
	text = strings.TrimSpace(text)
	if len(text) > maxQuoted {
		// An error quotes at most maxQuoted bytes of a file.
		return ""
	}
	_, value, ok := strings.Cut(text, ": ")
	value = strings.TrimSpace(value)
	if !ok || value == "" {
		return ""
	}
	switch value[0] {
	case '@', '`':
		return fmt.Sprintf("a value starting with %c must be quoted: %s", value[0], strings.Replace(text, value, `"`+value+`"`, 1))
	case '*':
		return fmt.Sprintf("a value starting with * must be quoted, or YAML reads it as an alias: %s", strings.Replace(text, value, `"`+value+`"`, 1))
	}
	return ""
}

// nearest is the name in known a misspelt name most likely meant: the
// same letters but for case, _ and -, or at most two edits away and closer
// than any other; "" when none is.
func nearest(name string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if sameLetters(name, k) {
			return k
		}
		if d := editDistance(name, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// sameLetters reports whether a and b are one name but for case, _ and -.
func sameLetters(a, b string) bool {
	letters := func(s string, i int) (byte, int) {
		for i < len(s) && (s[i] == '_' || s[i] == '-') {
			i++
		}
		if i == len(s) {
			return 0, i
		}
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		return c, i + 1
	}
	i, j := 0, 0
	for {
		var ca, cb byte
		ca, i = letters(a, i)
		cb, j = letters(b, j)
		if ca != cb {
			return false
		}
		if ca == 0 {
			return true
		}
	}
}

// editDistance is the Levenshtein distance of a and b, bytewise.
func editDistance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
