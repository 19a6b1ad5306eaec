package notify_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/notify"
)

// secret is the part of each webhook URL that is its credential, as in
// Slack's https://hooks.slack.com/services/T000/B000/XXXX.
const secret = "/services/T000/B000/SECRETpath?token=SECRETquery"

// closedPort returns a loopback address nothing listens on: connecting to
// it is refused.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// hangUp returns a loopback address that accepts each connection and
// closes it without a word.
func hangUp(t *testing.T, reset bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if reset {
				// A linger of zero makes the close a reset.
				_ = c.(*net.TCPConn).SetLinger(0)
			} else if r, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
				// Read the whole request first, so that the close is
				// seen as an end of file, never as a reset of a request
				// still being written.
				_, _ = io.Copy(io.Discard, r.Body)
			}
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// server starts a real HTTP server on loopback with handler.
func server(t *testing.T, tls bool, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(handler)
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

// TestADeliveryErrorNamesOnlyTheHost: whatever stops a delivery (a port
// that refuses, a host that hangs up or never answers, a certificate that
// does not verify, a redirect to any of them or to a refused address),
// the invocation's log and the server's log say which host and what kind
// of failure, and never the webhook's path or query, nor a redirect's.
// Before, both held the transport's text, the whole URL in it.
func TestADeliveryErrorNamesOnlyTheHost(t *testing.T) {
	refused := closedPort(t)
	hungUp, reset := hangUp(t, false), hangUp(t, true)
	silent := server(t, false, func(w http.ResponseWriter, r *http.Request) {
		// Once the body is read, the server notices the client leave.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	})
	untrusted := server(t, true, func(w http.ResponseWriter, r *http.Request) {})
	redirect := func(to string) string {
		return server(t, false, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, to+r.URL.RequestURI(), http.StatusTemporaryRedirect)
		}).URL
	}
	for _, tc := range []struct {
		name, webhook, want string
	}{
		{"a port that refuses", "http://" + refused, "cannot connect to " + refused + ": connection refused"},
		{"a host that hangs up", "http://" + hungUp, hungUp + " closed the connection without an answer"},
		{"a host that resets the connection", "http://" + reset, reset + " closed the connection without an answer"},
		{"a host that never answers", silent.URL, "no answer from " + strings.TrimPrefix(silent.URL, "http://") + " within 100ms"},
		{"a certificate that does not verify", untrusted.URL, "the TLS certificate of " + strings.TrimPrefix(untrusted.URL, "https://") + " does not verify"},
		{"a redirect to a port that refuses", redirect("http://" + refused), "(after a redirect): connection refused"},
		{"a redirect to a refused address", redirect("http://10.0.0.1"), "destination 10.0.0.1 refused: a private address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStack(t, loopback, notify.Options{Timeout: 100 * time.Millisecond})
			s.defineTo(tc.webhook+secret, true, "slack", engine.NotifyFailure)
			s.runUntil(t0.Add(90 * time.Second))
			log, serverLog := s.log("20260302T100100Z"), s.serverLog.String()
			if !strings.Contains(log, "notify failure: not delivered: ") || !strings.Contains(log, tc.want) {
				t.Errorf("the invocation's log does not say %q:\n%s", tc.want, log)
			}
			if !strings.Contains(serverLog, "a notification was not delivered") {
				t.Errorf("the server's log does not record the failure:\n%s", serverLog)
			}
			for what, text := range map[string]string{"invocation's log": log, "server's log": serverLog} {
				if strings.Contains(text, "SECRET") || strings.Contains(text, "/services/") {
					t.Errorf("the %s holds the webhook's path or query:\n%s", what, text)
				}
			}
		})
	}
}
