package config

import "bytes"

// maxFileItems bounds the YAML nodes a config file may make, counted by
// itemsBound before the YAML parser builds any. The parser builds the
// whole tree first, at about 240 bytes and a microsecond of CPU a node,
// and only then can the decoder apply its own bounds: a 16 MiB file of 8
// million one-character list items cost 2.9 GB and 12 s. A file of
// 100,000 small jobs counts about 1.6 million.
const maxFileItems = 2_000_000

// itemsBound returns an upper bound on the nodes the YAML parser (yaml.v3)
// would build from data, and the line where the count first passes limit
// (0 if it does not). It reads data once and builds nothing.
//
// Every node the parser builds comes from a token: a scalar, which starts
// right after a separator (white space, a line break, one of ,[]{} or a
// : or ? indicator), an alias, which starts the same way, or an indicator
// that opens a collection or stands for an empty value. So it counts each
// byte that follows a separator, each of ,[]{} once, each - before a
// blank twice (a block sequence and an empty item), each ? three times (a
// mapping, an empty key, an empty value), and each : once for the mapping
// it may open, once more if no key can be right before it, and once more
// if no value follows on its line. Nothing is skipped as a quoted string
// or a block scalar, since knowing where one ends takes a parser; only
// comments are, where no quote later on the line could have opened a
// string the # is in. Everything the parser might take for a node is
// counted, so the bound holds for any bytes; ordinary configs count
// about twice their nodes, the densest files about one and a half.
func itemsBound(data []byte, limit int) (n, line int) {
	n = 1 // the document; a later one needs a --- or ... line, counted there
	i := 0
	if bytes.HasPrefix(data, []byte("\ufeff")) {
		i = 3 // a byte order mark, which the parser skips
	}
	blank := true      // the byte before is a blank or a line break
	sep := true        // the byte before is a separator
	var wordStart byte // the first byte after the last separator; 0 after one
	line = 1
	quote := -1 // the first quote after the last # looked at, on its line; -1 for none
	for ; i < len(data); i++ {
		b := data[i]
		switch byteClass[b] {
		case ordinary:
		case mayBreak:
			k := breakAt(data, i)
			if k == 0 {
				break
			}
			if n > limit {
				return n, line
			}
			line++
			i += k - 1
			blank, sep, wordStart = true, true, 0
			continue
		case isBlank:
			blank, sep, wordStart = true, true, 0
			continue
		case isHash:
			if !blank {
				break
			}
			if quote < i {
				quote = nextQuote(data, i)
			}
			if quote >= 0 {
				break // the # may be in a string that ends on its line
			}
			// A comment, or the inside of a string that goes on past
			// this line, or of a block scalar: no node either way.
			for i+1 < len(data) && breakAt(data, i+1) == 0 {
				i++
			}
			continue
		case isFlow:
			n++
			blank, sep, wordStart = false, true, 0
			continue
		case isKey:
			n += 3
			blank, sep, wordStart = false, true, 0
			continue
		case isValue:
			n++
			if sep || wordStart == '&' || wordStart == '!' {
				n++ // an empty key: nothing, or an anchor or tag alone, before it
			}
			if emptyAfter(data, i+1) {
				n++
			}
			blank, sep, wordStart = false, true, 0
			continue
		case isEntry:
			if blankAt(data, i+1) {
				n += 2
				blank, sep, wordStart = false, true, 0
				continue
			}
		}
		if sep {
			n++
			sep, wordStart = false, b
		}
		blank = false
	}
	if n > limit {
		return n, line
	}
	return n, 0
}

// The classes of bytes itemsBound tells apart.
const (
	ordinary = iota
	mayBreak // \n, \r, or the first byte of NEL, LS or PS
	isBlank
	isHash
	isFlow // , [ ] { }
	isKey
	isValue
	isEntry
)

var byteClass = func() (c [256]uint8) {
	for _, b := range []byte("\n\r\xc2\xe2") {
		c[b] = mayBreak
	}
	c[' '], c['\t'], c['#'] = isBlank, isBlank, isHash
	for _, b := range []byte(",[]{}") {
		c[b] = isFlow
	}
	c['?'], c[':'], c['-'] = isKey, isValue, isEntry
	return c
}()

// nextQuote returns the index of the first ' or " after data[i] on its
// line, -1 if there is none.
func nextQuote(data []byte, i int) int {
	for j := i + 1; j < len(data) && breakAt(data, j) == 0; j++ {
		if data[j] == '\'' || data[j] == '"' {
			return j
		}
	}
	return -1
}

// breakAt returns the length of the line break at data[i], 0 if there is
// none: LF, CR, and the NEL, LS and PS the YAML parser takes for breaks.
func breakAt(data []byte, i int) int {
	switch {
	case data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n':
		return 2
	case data[i] == '\n' || data[i] == '\r':
		return 1
	case data[i] == 0xc2 && i+1 < len(data) && data[i+1] == 0x85:
		return 2
	case data[i] == 0xe2 && i+2 < len(data) && data[i+1] == 0x80 && (data[i+2] == 0xa8 || data[i+2] == 0xa9):
		return 3
	}
	return 0
}

// blankAt reports whether data[i] is a blank, a line break or the end, as
// after a - that is an indicator.
func blankAt(data []byte, i int) bool {
	return i >= len(data) || data[i] == ' ' || data[i] == '\t' || data[i] == 0 || breakAt(data, i) > 0
}

// emptyAfter reports whether the value after a : at data[i] may be empty:
// nothing on the rest of its line may start one.
func emptyAfter(data []byte, i int) bool {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t') {
		i++
	}
	if blankAt(data, i) {
		return true
	}
	return bytes.IndexByte([]byte(",]}#&!:?-"), data[i]) >= 0
}
