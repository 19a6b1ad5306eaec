package web

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/sundial-cron/sundial/store"
)

// checkQuery refuses query parameters the route does not take, and any
// given twice: a typo must not be silently ignored.
func checkQuery(r *http.Request, allowed []string) error {
	q, err := urlQuery(r)
	if err != nil {
		return err
	}
	for k, v := range q {
		if !slices.Contains(allowed, k) {
			if len(allowed) == 0 {
				return badRequest("unknown query parameter %q: this route takes none", k)
			}
			return badRequest("unknown query parameter %q: this route takes %s", k, strings.Join(allowed, ", "))
		}
		if len(v) > 1 {
			return badRequest("query parameter %q is given %d times", k, len(v))
		}
	}
	return nil
}

func urlQuery(r *http.Request) (map[string][]string, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, badRequest("malformed query: %v", err)
	}
	return q, nil
}

// Page sizes of the listings.
const (
	defaultLimit = 50
	maxLimit     = 1000
)

// cursorVersion marks the API's cursors, so a later format can tell this
// one apart: someone paging through an upgrade holds a cursor of the
// release before. Version 0 (313afd2 and before) has no mark and is still
// read; it starts with its listing's name, never with the mark.
const cursorVersion = "1\x00"

// page reads ?limit= and ?cursor= of a listing. A cursor is the store's,
// wrapped with the listing it belongs to, so a cursor of one job's
// invocations given for another job's is refused instead of paging
// through the wrong job.
func page(r *http.Request, listing string) (store.Page, error) {
	q, err := urlQuery(r)
	if err != nil {
		return store.Page{}, err
	}
	p := store.Page{Limit: defaultLimit}
	if s, ok := q["limit"]; ok {
		n, err := strconv.Atoi(s[0])
		if err != nil || n < 1 || n > maxLimit {
			return store.Page{}, badRequest("limit %q: want a whole number from 1 to %d", s[0], maxLimit)
		}
		p.Limit = n
	}
	if s, ok := q["cursor"]; ok {
		b, err := base64.RawURLEncoding.DecodeString(s[0])
		inner, found := strings.CutPrefix(strings.TrimPrefix(string(b), cursorVersion), listing+"\x00")
		if err != nil || !found || inner == "" {
			return store.Page{}, badRequest("cursor %q is not a cursor of this listing", s[0])
		}
		p.Cursor = inner
	}
	return p, nil
}

// nextCursor wraps the store's cursor for the next page; "" stays "".
func nextCursor(listing, next string) string {
	if next == "" {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte(cursorVersion + listing + "\x00" + next))
}

// maxBody bounds a request body; the API's bodies are a few fields.
const maxBody = 64 << 10

// decodeBody decodes an optional JSON body into v, refusing unknown fields,
// keys given twice or in another case than v's fields (checkKeys), and
// anything after the object. An empty body leaves v as it is.
func decodeBody(r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return badRequest("the request body is over %d bytes", maxBody)
	}
	if err != nil {
		return fmt.Errorf("reading the request body: %w", err)
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	if err := checkKeys(body, reflect.TypeOf(v)); err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("request body: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("request body: want one JSON object, found more after it")
	}
	return nil
}
