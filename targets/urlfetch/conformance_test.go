package urlfetch_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/targettest"
	"github.com/sundial-cron/sundial/targets/urlfetch"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	targettest.Run(t, targettest.Harness{
		New:        func(t *testing.T) targets.Target { return newTarget(t, loopback) },
		Succeeding: answering(http.StatusOK),
		Launched:   targets.Succeeded,
		Failing:    answering(http.StatusInternalServerError),
		Hang:       hangingReceiver,
		// The key travels in the Sundial-Invocation-Id header.
		Witness: func(t *testing.T) (json.RawMessage, func() []string) {
			var mu sync.Mutex
			var keys []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				keys = append(keys, r.Header.Get("Sundial-Invocation-Id"))
			}))
			t.Cleanup(srv.Close)
			return json.RawMessage(spec(srv.URL, "")), func() []string {
				mu.Lock()
				defer mu.Unlock()
				return slices.Clone(keys)
			}
		},
		Noisy: func(t *testing.T) json.RawMessage {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, strings.Repeat("many\nlines\r\n", 100000))
			}))
			t.Cleanup(srv.Close)
			return json.RawMessage(spec(srv.URL, ""))
		},
		// The status line, 4 KiB of the body and the marker saying it was
		// cut.
		LogLimit: len("HTTP/1.1 200 OK\n") + urlfetch.LogBodyLimit + len("\n[response body cut at 4096 bytes]\n"),
		BadSpecs: []targettest.BadSpec{
			{Spec: ``, Field: "url_fetch: bad spec"},
			{Spec: `{}`, Field: "url is missing"},
			{Spec: `{"url": "/report"}`, Field: `bad url "/report": want an absolute http:// or https:// URL`},
			{Spec: `{"url": "ftp://example.com/x"}`, Field: "want an absolute http:// or https:// URL"},
			{Spec: `{"url": "http:///x"}`, Field: "no host"},
			{Spec: `{"url": "http://exa mple.com/"}`, Field: "bad url"},
			{Spec: `{"url": "http://example.com/a\nb"}`, Field: "bad url"},
			{Spec: `{"url": "https://example.com", "method": "GET /"}`, Field: `bad method "GET /"`},
			{Spec: `{"url": "https://example.com", "headers": {"X-A:": "1"}}`, Field: `bad header name "X-A:"`},
			{Spec: `{"url": "https://example.com", "headers": {"X-A": "1\r\nX-B: 2"}}`, Field: `header "X-A": the value holds a line break`},
			{Spec: `{"url": "https://example.com", "headers": {"sundial-attempt": "1"}}`, Field: "the Sundial-* headers are set by Sundial"},
			{Spec: `{"url": "https://example.com", "headers": {"Host": "other"}}`, Field: `header "Host" is set by the HTTP client`},
			{Spec: `{"url": "https://example.com", "success_codes": [99]}`, Field: "bad success code 99: want 100-599"},
			{Spec: `{"url": "https://example.com", "success_codes": [600]}`, Field: "bad success code 600"},
			{Spec: `{"url": "https://example.com", "success_codes": ["200"]}`, Field: "Spec.success_codes"},
			{Spec: `{"url": "https://example.com", "timeout": "10s"}`, Field: `unknown field "timeout"`},
			{Spec: `{"url": "https://example.com"} {}`, Field: "more than one JSON value"},
		},
		// A URL cannot hold a raw line break (Check refuses it); an
		// escaped one must stay escaped in the message, and a refused
		// destination's message must not unescape it either.
		LineBreaks: []json.RawMessage{
			json.RawMessage(`{"url": "http://127.0.0.1:1/a%0Ab%0D%0A"}`),
			json.RawMessage(`{"url": "http://169.254.169.254/a%0Ab"}`),
		},
	})
}

// answering returns a Harness spec func whose receiver answers code.
func answering(code int) func(t *testing.T) json.RawMessage {
	return func(t *testing.T) json.RawMessage {
		srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) })
		return json.RawMessage(spec(srv.URL, ""))
	}
}

// hangingReceiver holds each request until the client goes away (or the
// test ends), saying when the first has arrived.
func hangingReceiver(t *testing.T) (json.RawMessage, <-chan struct{}) {
	arrived := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(arrived) })
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	// Registered after srv.Close, so run before it: Close waits for the
	// handlers.
	t.Cleanup(func() { close(release) })
	return json.RawMessage(spec(srv.URL, "")), arrived
}
