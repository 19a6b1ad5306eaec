package urlfetch_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/urlfetch"
)

var occurrence = time.Date(2026, 3, 8, 2, 30, 0, 0, time.FixedZone("EST", -5*3600))

func request(spec string) targets.Request {
	return targets.Request{
		Key: "billing/nightly/inv-7", JobID: "billing/nightly", Invocation: "inv-7",
		Occurrence: occurrence, Attempt: 2, Spec: json.RawMessage(spec),
	}
}

func spec(url string, fields string) string {
	if fields != "" {
		fields = ", " + fields
	}
	return fmt.Sprintf(`{"url": %q%s}`, url, fields)
}

// newTarget builds a target.
func newTarget(t *testing.T, opts urlfetch.Options) *urlfetch.Target {
	t.Helper()
	tgt, err := urlfetch.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return tgt
}

// loopback is the options of a target whose receivers are on loopback,
// which the operator must allow.
var loopback = urlfetch.Options{Egress: allowing("127.0.0.0/8", "::1")}

// privateRanges are loopback, the private ranges and link-local.
var privateRanges = []string{"127.0.0.0/8", "::1", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7", "fec0::/10", "169.254.0.0/16"}

func allowing(entries ...string) urlfetch.Egress {
	return urlfetch.Egress{Allow: entries}
}

// seen is one request as the receiver saw it.
type seen struct {
	method, path, body string
	header             http.Header
}

// receiver starts a server on loopback that records every request and
// answers with handler (or 200 OK).
func receiver(t *testing.T, handler http.HandlerFunc) (*httptest.Server, chan seen) {
	t.Helper()
	got := make(chan seen, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.Path, string(body), r.Header.Clone()}
		if handler != nil {
			handler(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func TestLaunchSendsTheRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, fields     string
		wantMethod, body string
		wantHeader       map[string]string
	}{
		{"a bare spec is a GET with the Sundial headers", "", "GET", "", map[string]string{
			"Sundial-Invocation-Id":  "billing/nightly/inv-7",
			"Sundial-Job-Id":         "billing/nightly",
			"Sundial-Scheduled-Time": "2026-03-08T07:30:00Z",
			"Sundial-Attempt":        "2",
			"User-Agent":             urlfetch.UserAgent,
		}},
		{"method, headers and body are sent", `"method": "POST", "body": "{\"kind\": 1}", "headers": {"content-type": "application/json", "X-Team": "billing"}`,
			"POST", `{"kind": 1}`, map[string]string{
				"Content-Type":          "application/json",
				"X-Team":                "billing",
				"Sundial-Invocation-Id": "billing/nightly/inv-7",
			}},
		{"a spec may set its own User-Agent", `"headers": {"User-Agent": "billing-cron"}`, "GET", "", map[string]string{
			"User-Agent": "billing-cron",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, got := receiver(t, nil)
			res := newTarget(t, loopback).Launch(t.Context(), request(spec(srv.URL+"/run", tc.fields)))
			if res.Status != targets.Succeeded {
				t.Fatalf("Launch = %v %q; want Succeeded", res.Status, res.Message)
			}
			r := <-got
			if r.method != tc.wantMethod || r.path != "/run" || r.body != tc.body {
				t.Errorf("receiver saw %s %s %q; want %s /run %q", r.method, r.path, r.body, tc.wantMethod, tc.body)
			}
			for name, want := range tc.wantHeader {
				if v := r.header.Values(name); len(v) != 1 || v[0] != want {
					t.Errorf("header %s = %q; want %q", name, v, want)
				}
			}
		})
	}
}

func TestLaunchSuccessCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		status int
		codes  string
		want   targets.Status
	}{
		{"200 succeeds by default", 200, "", targets.Succeeded},
		{"204 succeeds by default", 204, "", targets.Succeeded},
		{"299 succeeds by default", 299, "", targets.Succeeded},
		{"302 without a Location fails by default", 302, "", targets.Failed},
		{"404 fails by default", 404, "", targets.Failed},
		{"500 fails by default", 500, "", targets.Failed},
		{"a listed 404 succeeds", 404, "[200, 404]", targets.Succeeded},
		{"an unlisted 201 fails when codes are given", 201, "[200]", targets.Failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(tc.status) })
			fields := ""
			if tc.codes != "" {
				fields = `"success_codes": ` + tc.codes
			}
			res := newTarget(t, loopback).Launch(t.Context(), request(spec(srv.URL, fields)))
			if res.Status != tc.want {
				t.Errorf("Launch = %v %q; want %v", res.Status, res.Message, tc.want)
			}
			if wantLine := fmt.Sprintf("HTTP/1.1 %d ", tc.status); !strings.HasPrefix(string(res.Log), wantLine) {
				t.Errorf("Log = %q; want it to start with the status line %q", res.Log, wantLine)
			}
			if strings.Contains(res.Message, "\n") || !strings.Contains(res.Message, fmt.Sprint(tc.status)) {
				t.Errorf("Message = %q; want one line naming the status", res.Message)
			}
		})
	}
}

func TestLaunchLogsAtMost4KiBOfTheBody(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		size    int
		wantLog string
	}{
		{"an empty body", 0, "HTTP/1.1 200 OK\n"},
		{"a short body whole", 10, "HTTP/1.1 200 OK\n" + strings.Repeat("x", 10)},
		{"a body of exactly 4 KiB whole", 4096, "HTTP/1.1 200 OK\n" + strings.Repeat("x", 4096)},
		{"a longer body cut at 4 KiB, saying so", 1 << 20, "HTTP/1.1 200 OK\n" + strings.Repeat("x", 4096) + "\n[response body cut at 4096 bytes]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, strings.Repeat("x", tc.size))
			})
			res := newTarget(t, loopback).Launch(t.Context(), request(spec(srv.URL, "")))
			if res.Status != targets.Succeeded || string(res.Log) != tc.wantLog {
				t.Errorf("Launch = %v, log of %d bytes %.40q...; want Succeeded with %d bytes %.40q...", res.Status, len(res.Log), res.Log, len(tc.wantLog), tc.wantLog)
			}
		})
	}
}

func TestLaunchFollowsRedirects(t *testing.T) {
	t.Parallel()
	srv, got := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/final" {
			http.Redirect(w, r, "/final", http.StatusFound)
		}
	})
	res := newTarget(t, loopback).Launch(t.Context(), request(spec(srv.URL+"/start", "")))
	if res.Status != targets.Succeeded {
		t.Fatalf("Launch = %v %q; want Succeeded", res.Status, res.Message)
	}
	<-got
	if r := <-got; r.path != "/final" || r.header.Get("Sundial-Invocation-Id") != "billing/nightly/inv-7" {
		t.Errorf("the redirect's destination saw %s with Sundial-Invocation-Id %q; want /final with the key", r.path, r.header.Get("Sundial-Invocation-Id"))
	}
}

func TestLaunchStopsAtTooManyRedirects(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.Redirect(w, r, "/again", http.StatusFound)
	})
	res := newTarget(t, urlfetch.Options{Egress: loopback.Egress, MaxRedirects: 2}).Launch(t.Context(), request(spec(srv.URL, "")))
	if res.Status != targets.Failed || !strings.Contains(res.Message, "more than 2 redirects") {
		t.Errorf("Launch = %v %q; want Failed: more than 2 redirects", res.Status, res.Message)
	}
	if n.Load() != 3 {
		t.Errorf("the receiver saw %d requests; want 3 (the first and 2 redirects)", n.Load())
	}
}

// A refused destination fails the attempt saying why, and no request
// reaches it. The refused addresses outside loopback are refused before
// any connection is tried, so these tests need no network.
func TestLaunchRefusesDestinations(t *testing.T) {
	t.Parallel()
	// A receiver on 127.0.0.2, which the deny list below refuses.
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	var denied atomic.Int32
	deniedSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { denied.Add(1) }))
	deniedSrv.Listener.Close()
	deniedSrv.Listener = ln
	deniedSrv.Start()
	t.Cleanup(deniedSrv.Close)

	var reached atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
		}
	}))
	t.Cleanup(srv.Close)
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	localhost := "http://localhost:" + port

	for _, tc := range []struct {
		name        string
		egress      urlfetch.Egress
		url         string
		wantMessage string
		wantReached int32 // requests that may reach srv
	}{
		{"the metadata IP is refused by default", urlfetch.Egress{}, "http://169.254.169.254/computeMetadata/v1/", "169.254.169.254 refused: a cloud metadata address", 0},
		{"the metadata IP is refused with link-local and private ranges allowed", allowing(privateRanges...), "http://169.254.169.254/", "a cloud metadata address", 0},
		{"the metadata name is refused without resolving it", urlfetch.Egress{}, "http://metadata.google.internal/computeMetadata/v1/", "metadata.google.internal refused: a cloud metadata service", 0},
		{"AWS's IPv6 metadata address is refused with fc00::/7 allowed", allowing(privateRanges...), "http://[fd00:ec2::254]/", "a cloud metadata address", 0},
		{"the metadata IP through NAT64 is refused", urlfetch.Egress{}, "http://[64:ff9b::a9fe:a9fe]/", "169.254.169.254 refused: a cloud metadata address", 0},
		{"loopback as an IPv4-compatible address is refused", urlfetch.Egress{}, "http://[::127.0.0.1]:" + port + "/", "127.0.0.1 refused: a loopback address", 0},
		{"loopback through 6to4 is refused", urlfetch.Egress{}, "http://[2002:7f00:1::]:" + port + "/", "127.0.0.1 refused: a loopback address", 0},
		{"loopback through a local-use NAT64 prefix is refused", urlfetch.Egress{}, "http://[64:ff9b:1:7f00:0:100::]:" + port + "/", "127.0.0.1 refused: a loopback address", 0},
		{"the metadata IP through 6to4 is refused with private ranges allowed", allowing(privateRanges...), "http://[2002:a9fe:a9fe::]/", "169.254.169.254 refused: a cloud metadata address", 0},
		{"a site-local address is private", loopback.Egress, "http://[fec0::1]/", "a private address", 0},
		{"a Teredo address is refused", allowing(privateRanges...), "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "a Teredo tunnel address", 0},
		{"0.0.0.0, which Linux connects to the local host, is refused", loopback.Egress, "http://0.0.0.0:" + port + "/", "0.0.0.0 refused: not a unicast address", 0},
		{"link-local IPv4 is refused", urlfetch.Egress{}, "http://169.254.10.1/", "a link-local address", 0},
		{"link-local IPv6 is refused", urlfetch.Egress{}, "http://[fe80::1]/", "a link-local address", 0},
		{"a private address is refused by default", loopback.Egress, "http://10.1.2.3/", "a private address", 0},
		{"loopback is refused when not allowed", urlfetch.Egress{}, srv.URL, "a loopback address", 0},
		{"a name resolving to loopback is refused by the address it resolved to", urlfetch.Egress{}, localhost, "a loopback address", 0},
		{"the deny list wins over allowed loopback", urlfetch.Egress{Allow: []string{"127.0.0.0/8"}, Deny: []string{"127.0.0.0/8"}}, srv.URL, "on the server's deny list", 0},
		{"a denied host name is refused", urlfetch.Egress{Allow: []string{"127.0.0.0/8"}, Deny: []string{"LOCALHOST."}}, localhost, "localhost refused: on the server's deny list", 0},
		{"a redirect to the metadata IP is refused", loopback.Egress, srv.URL + "/?to=http://169.254.169.254/latest/meta-data/", "169.254.169.254 refused: a cloud metadata address", 1},
		{"a redirect to a denied address is refused", urlfetch.Egress{Allow: []string{"127.0.0.0/8"}, Deny: []string{"127.0.0.2"}}, srv.URL + "/?to=" + deniedSrv.URL, "127.0.0.2 refused: on the server's deny list", 1},
		{"a redirect to a non-HTTP scheme is refused", loopback.Egress, srv.URL + "/?to=file:///etc/passwd", `redirect to a "file" URL`, 1},
		{"an allow-listed address passes where loopback is refused", urlfetch.Egress{Allow: []string{"127.0.0.1/32"}}, srv.URL, "200 OK", 1},
		{"an allow-listed name passes where loopback is refused", urlfetch.Egress{Allow: []string{"localhost"}}, localhost, "200 OK", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Not parallel: the counts are shared.
			before, beforeDenied := reached.Load(), denied.Load()
			res := newTarget(t, urlfetch.Options{Egress: tc.egress}).Launch(t.Context(), request(spec(tc.url, "")))
			wantStatus := targets.Failed
			if tc.wantMessage == "200 OK" {
				wantStatus = targets.Succeeded
			}
			if res.Status != wantStatus || !strings.Contains(res.Message, tc.wantMessage) {
				t.Errorf("Launch(%s) = %v %q; want %v with %q", tc.url, res.Status, res.Message, wantStatus, tc.wantMessage)
			}
			if n := reached.Load() - before; n != tc.wantReached {
				t.Errorf("the loopback receiver saw %d requests; want %d", n, tc.wantReached)
			}
			if n := denied.Load() - beforeDenied; n != 0 {
				t.Errorf("the denied receiver saw %d requests; want none", n)
			}
		})
	}
}

func TestNewRefusesABadEgress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		egress urlfetch.Egress
		want   string
	}{
		{"a URL in the allow list", urlfetch.Egress{Allow: []string{"http://example.com"}}, `allow list: bad entry "http://example.com"`},
		{"a host with a port in the deny list", urlfetch.Egress{Deny: []string{"example.com:80"}}, `deny list: bad entry "example.com:80"`},
		{"an empty entry", urlfetch.Egress{Deny: []string{""}}, `deny list: bad entry ""`},
		{"a wildcard inside a name", urlfetch.Egress{Allow: []string{"api.*.example.com"}}, `bad entry "api.*.example.com"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := urlfetch.New(urlfetch.Options{Egress: tc.egress}); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New = %v; want an error containing %q", err, tc.want)
			}
		})
	}
}
