package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// checkKeys walks a JSON document and refuses what encoding/json would
// quietly accept: a key given twice in one object (the last one wins
// there, so a proxy or log that reads the first sees another request) and
// a key that names a field of t only when case is ignored ("REASON" for
// "reason"). Keys of nested objects are checked against the fields of the
// struct they decode into; a value of another type is walked for
// duplicates only. Malformed JSON is left for the decoder to describe.
func checkKeys(data []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := walkValue(dec, t, "body"); err != nil && !errors.Is(err, errMalformed) {
		return err
	}
	return nil
}

// errMalformed stops the walk at JSON the decoder will refuse with a
// better message.
var errMalformed = errors.New("malformed JSON")

func walkValue(dec *json.Decoder, t reflect.Type, at string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return errMalformed
	}
	switch tok {
	case json.Delim('{'):
		return walkObject(dec, t, at)
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := walkValue(dec, elem, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return errMalformed
		}
	}
	return nil
}

func walkObject(dec *json.Decoder, t reflect.Type, at string) error {
	var fields map[string]reflect.Type
	var elem reflect.Type
	switch {
	case t != nil && t.Kind() == reflect.Struct:
		fields = jsonFields(t)
	case t != nil && t.Kind() == reflect.Map:
		elem = t.Elem()
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return errMalformed
		}
		key, ok := tok.(string)
		if !ok {
			return errMalformed
		}
		if seen[key] {
			return badRequest("request body: %s: key %q given twice", at, key)
		}
		seen[key] = true
		if fields != nil {
			ft, known := fields[key]
			if !known {
				for name := range fields {
					if strings.EqualFold(name, key) {
						return badRequest("request body: %s: unknown field %q; field names are case-sensitive: did you mean %q?", at, key, name)
					}
				}
				// An unknown field is the decoder's to refuse.
			}
			elem = ft
		}
		if err := walkValue(dec, elem, at+"."+key); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return errMalformed
	}
	return nil
}

// jsonFields maps the JSON names of t's fields, as encoding/json names
// them, to their types. Embedded structs are flattened.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || (f.Anonymous && f.Type.Kind() == reflect.Struct) {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		fields[name] = f.Type
	}
	return fields
}
