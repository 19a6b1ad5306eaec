package urlfetch_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/target"
	"github.com/sundial-cron/sundial/target/urlfetch"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	tgt := newTarget(t, urlfetch.Options{})
	for _, tc := range []struct {
		name string
		spec string
		want string // a substring of the error; "" for none
	}{
		{"a bare https URL", `{"url": "https://example.com/report"}`, ""},
		{"every field", `{"url": "http://example.com:8080/x?y=1", "method": "POST", "headers": {"Content-Type": "application/json"}, "body": "{}", "success_codes": [200, 202]}`, ""},
		{"an extension method", `{"url": "https://example.com", "method": "PURGE"}`, ""},
		{"no spec at all", ``, "url_fetch: bad spec"},
		{"no url", `{}`, "url is missing"},
		{"a relative url", `{"url": "/report"}`, `bad url "/report": want an absolute http:// or https:// URL`},
		{"a url of another scheme", `{"url": "ftp://example.com/x"}`, "want an absolute http:// or https:// URL"},
		{"a url without a host", `{"url": "http:///x"}`, "no host"},
		{"a url that does not parse", `{"url": "http://exa mple.com/"}`, "bad url"},
		{"a method with a space", `{"url": "https://example.com", "method": "GET /"}`, `bad method "GET /"`},
		{"a header name with a colon", `{"url": "https://example.com", "headers": {"X-A:": "1"}}`, `bad header name "X-A:"`},
		{"a header value with a line break", `{"url": "https://example.com", "headers": {"X-A": "1\r\nX-B: 2"}}`, `header "X-A": the value holds a line break`},
		{"a Sundial header", `{"url": "https://example.com", "headers": {"sundial-attempt": "1"}}`, "the Sundial-* headers are set by Sundial"},
		{"a Host header", `{"url": "https://example.com", "headers": {"Host": "other"}}`, `header "Host" is set by the HTTP client`},
		{"a success code below 100", `{"url": "https://example.com", "success_codes": [99]}`, "bad success code 99: want 100-599"},
		{"a success code above 599", `{"url": "https://example.com", "success_codes": [600]}`, "bad success code 600"},
		{"success codes that are not numbers", `{"url": "https://example.com", "success_codes": ["200"]}`, "bad spec"},
		{"an unknown field", `{"url": "https://example.com", "timeout": "10s"}`, `unknown field "timeout"`},
		{"trailing JSON", `{"url": "https://example.com"} {}`, "more than one JSON value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tgt.Check(json.RawMessage(tc.spec))
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Check(%s) = %v; want %q", tc.spec, err, tc.want)
			}
			if tc.want == "" {
				return
			}
			// Launch refuses the same spec with the same error, before any
			// request: the strictest policy would refuse example.com's
			// address with another message.
			res := tgt.Launch(t.Context(), request(tc.spec))
			if res.Status != target.Failed || res.Message != err.Error() {
				t.Errorf("Launch = %v %q; want Failed %q", res.Status, res.Message, err)
			}
		})
	}
}
