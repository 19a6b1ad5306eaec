// Package urlfetch is the target that calls an HTTP(S) URL.
//
// Every request carries headers a receiver can de-duplicate by:
//
//	Sundial-Invocation-Id   the idempotency key, "<project>/<job>/<invocation id>":
//	                        the same for every attempt of an occurrence, so a
//	                        receiver that has done the work for it can skip a retry
//	Sundial-Job-Id          "<project>/<job>"
//	Sundial-Scheduled-Time  the occurrence, RFC 3339 in UTC
//	Sundial-Attempt         1 for the first attempt, 2 for the first retry, ...
//
// Destinations are checked by an Egress on the address actually dialled, for
// the first request and for every redirect; the server's own listening
// sockets (Listeners) are never dialled.
package urlfetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sundial-cron/sundial/targets"
)

// UserAgent is sent with every request unless the spec sets its own.
const UserAgent = "Sundial (+https://github.com/sundial-cron/sundial)"

// LogBodyLimit is how much of a response body is kept in the invocation's log.
const LogBodyLimit = 4 << 10

// DefaultMaxRedirects is how many redirects are followed when Options does
// not say.
const DefaultMaxRedirects = 5

// Options configure a Target. The zero value is the strictest egress.
type Options struct {
	Egress Egress
	// Server holds the server's own listening sockets, refused whatever
	// Egress says; nil means none are known.
	Server *Listeners
	// MaxRedirects is how many redirects one attempt follows; 0 means
	// DefaultMaxRedirects, a negative number follows none.
	MaxRedirects int
}

// Target is the url_fetch target. It is safe for concurrent use.
type Target struct {
	client *http.Client
}

// New returns a Target with opts, or an error naming a bad entry in the
// egress's lists.
func New(opts Options) (*Target, error) {
	c, err := NewClient(opts)
	if err != nil {
		return nil, err
	}
	return &Target{client: c}, nil
}

// NewClient returns an HTTP client that connects only where opts allow,
// judged at dial time as the target's own requests are: for anything else
// the server sends where a project's config says (notification webhooks).
func NewClient(opts Options) (*http.Client, error) {
	e, err := compile(opts.Egress, opts.Server)
	if err != nil {
		return nil, err
	}
	maxRedirects := opts.MaxRedirects
	if maxRedirects == 0 {
		maxRedirects = DefaultMaxRedirects
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// A proxy would dial on the job's behalf, out of the egress's sight.
	tr.Proxy = nil
	tr.DialContext = e.dial
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("more than %d redirects", max(maxRedirects, 0))
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to a %q URL", req.URL.Scheme)
			}
			// The dial checks the address again; this names the host.
			_, err := e.host(req.URL.Hostname())
			return err
		},
	}, nil
}

// dial connects only to addresses the egress allows. net.Dialer calls
// Control after resolving and before connecting, for every address it
// tries, so nothing is sent to a refused one.
func (e *egress) dial(ctx context.Context, network, address string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	listed, err := e.host(host)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{
		Timeout:   30 * time.Second,
		KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return err
			}
			return e.addr(ap.Addr(), ap.Port(), listed)
		},
	}
	return d.DialContext(ctx, network, address)
}

// Check refuses a spec that Launch could not run, naming the field.
func (t *Target) Check(raw json.RawMessage) error {
	_, err := parseSpec(raw)
	return err
}

// RunsWithinCall says that the response's status is the attempt's end
// (targets.Synchronous).
func (*Target) RunsWithinCall() {}

// Launch makes the request and waits for the response's status; ctx's
// deadline is the job's timeout.
func (t *Target) Launch(ctx context.Context, req targets.Request) targets.Result {
	spec, err := parseSpec(req.Spec)
	if err != nil {
		return targets.Result{Status: targets.Failed, Message: err.Error()}
	}
	method := spec.Method
	if method == "" {
		method = http.MethodGet
	}
	u, _ := url.Parse(spec.URL) // parseSpec checked it
	what := method + " " + u.Redacted()
	hr, err := http.NewRequestWithContext(ctx, method, spec.URL, strings.NewReader(spec.Body))
	if err != nil {
		return failed("%s: %v", what, err)
	}
	hr.Header.Set("User-Agent", UserAgent)
	for name, value := range spec.Headers {
		hr.Header.Set(name, value)
	}
	hr.Header.Set("Sundial-Invocation-Id", req.Key)
	hr.Header.Set("Sundial-Job-Id", req.JobID)
	hr.Header.Set("Sundial-Scheduled-Time", req.Occurrence.UTC().Format(time.RFC3339))
	hr.Header.Set("Sundial-Attempt", strconv.Itoa(req.Attempt))

	resp, err := t.client.Do(hr)
	if err != nil {
		var r *refusal
		if errors.As(err, &r) {
			return failed("%s: %v", what, r)
		}
		if cause := context.Cause(ctx); cause != nil {
			return failed("%s: %v", what, cause)
		}
		return failed("%s: %v", what, err)
	}
	defer resp.Body.Close()
	log, err := responseLog(resp)
	res := targets.Result{Log: log}
	if err != nil {
		res.Status = targets.Failed
		res.Message = fmt.Sprintf("url_fetch: %s: %s, then reading the body: %v", what, resp.Status, err)
		return res
	}
	if ok(resp.StatusCode, spec.SuccessCodes) {
		res.Status = targets.Succeeded
		res.Message = fmt.Sprintf("url_fetch: %s: %s", what, resp.Status)
	} else {
		res.Status = targets.Failed
		res.Message = fmt.Sprintf("url_fetch: %s: %s, want %s", what, resp.Status, wanted(spec.SuccessCodes))
	}
	return res
}

func failed(format string, args ...any) targets.Result {
	return targets.Result{Status: targets.Failed, Message: "url_fetch: " + fmt.Sprintf(format, args...)}
}

// responseLog is the status line and at most LogBodyLimit bytes of the body.
// It reads no more than that, so a huge or endless body costs nothing.
func responseLog(resp *http.Response) ([]byte, error) {
	log := fmt.Appendf(nil, "%s %s\n", resp.Proto, resp.Status)
	body, err := io.ReadAll(io.LimitReader(resp.Body, LogBodyLimit+1))
	if len(body) > LogBodyLimit {
		log = append(log, body[:LogBodyLimit]...)
		return fmt.Appendf(log, "\n[response body cut at %d bytes]\n", LogBodyLimit), nil
	}
	return append(log, body...), err
}

func ok(code int, want []int) bool {
	if len(want) == 0 {
		return code >= 200 && code <= 299
	}
	return slices.Contains(want, code)
}

func wanted(codes []int) string {
	if len(codes) == 0 {
		return "2xx"
	}
	s := make([]string, len(codes))
	for i, c := range codes {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, " or ")
}
