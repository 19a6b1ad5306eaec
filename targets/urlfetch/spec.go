package urlfetch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Spec is the url_fetch target's part of a job definition.
type Spec struct {
	// URL is the absolute http or https URL to call.
	URL string `json:"url"`
	// Method is the HTTP method; "" means GET.
	Method string `json:"method,omitempty"`
	// Headers are added to every request. The Sundial-* headers are set by
	// the target and cannot be given here.
	Headers map[string]string `json:"headers,omitempty"`
	// Body is sent as the request body.
	Body string `json:"body,omitempty"`
	// SuccessCodes are the final status codes that count as success; empty
	// means any 2xx.
	SuccessCodes []int `json:"success_codes,omitempty"`
}

// reservedHeaders may not be set by a spec: the transport derives them from
// the request, so a value given here would be ignored or would corrupt the
// framing of the request.
var reservedHeaders = map[string]bool{
	"Host":              true,
	"Content-Length":    true,
	"Transfer-Encoding": true,
	"Connection":        true,
}

// parseSpec decodes a spec strictly and checks every field, so Check and
// Launch refuse the same specs.
func parseSpec(raw json.RawMessage) (Spec, error) {
	var spec Spec
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return spec, fmt.Errorf("url_fetch: bad spec: %v", err)
	}
	if dec.More() {
		return spec, fmt.Errorf("url_fetch: bad spec: more than one JSON value")
	}
	if err := checkURL(spec.URL); err != nil {
		return spec, err
	}
	if spec.Method != "" && !isToken(spec.Method) {
		return spec, fmt.Errorf("url_fetch: bad method %q: want an HTTP method such as GET or POST", spec.Method)
	}
	for name, value := range spec.Headers {
		canon := http.CanonicalHeaderKey(name)
		switch {
		case !isToken(name):
			return spec, fmt.Errorf("url_fetch: bad header name %q", name)
		case strings.HasPrefix(canon, "Sundial-"):
			return spec, fmt.Errorf("url_fetch: header %q: the Sundial-* headers are set by Sundial", name)
		case reservedHeaders[canon]:
			return spec, fmt.Errorf("url_fetch: header %q is set by the HTTP client and cannot be given", name)
		case strings.ContainsAny(value, "\r\n\x00"):
			return spec, fmt.Errorf("url_fetch: header %q: the value holds a line break or NUL", name)
		}
	}
	for _, code := range spec.SuccessCodes {
		if code < 100 || code > 599 {
			return spec, fmt.Errorf("url_fetch: bad success code %d: want 100-599", code)
		}
	}
	return spec, nil
}

func checkURL(s string) error {
	if s == "" {
		return fmt.Errorf("url_fetch: url is missing")
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("url_fetch: bad url %q: %v", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("url_fetch: bad url %q: want an absolute http:// or https:// URL", s)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("url_fetch: bad url %q: no host", s)
	}
	return nil
}

// isToken reports whether s is an RFC 9110 token, the grammar of methods
// and header names.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
