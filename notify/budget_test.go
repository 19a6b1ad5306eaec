package notify_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/notify"
)

// tally counts the results a Webhooks reports.
type tally struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *tally) count(result string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[result]++
}

func (c *tally) of(result string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[result]
}

// newWebhooks is a Webhooks as the server builds it, on loopback, with
// the clock at t0.
func newWebhooks(t *testing.T, opts notify.Options) (*notify.Webhooks, *fakeclock.Clock) {
	t.Helper()
	clk := fakeclock.New(t0)
	opts.Client, opts.Check = egress(t, loopback)
	opts.Now = clk.Now
	return notify.New(opts), clk
}

// failureOf is job's failure notice, to webhook.
func failureOf(job, webhook string) engine.Notice {
	return engine.Notice{Key: job + "/20260302T100000Z/failure", JobID: job, Invocation: "20260302T100000Z",
		Event: engine.NotifyFailure, Status: "FAILED", Failures: 1, At: t0, Notify: engine.Notify{URL: webhook}}
}

// TestOneProjectCannotSilenceAnothersNotifications: project a's jobs all
// fail at once, a hundred telling an address the egress refuses, a
// hundred a webhook that never answers and a hundred one that answers
// 500; project b's failure is told all the same. The refused ones spend
// no budget, and a takes no more than its share of the rest. Before, the
// server-wide budget was spent first: the refused notices used all of it,
// and b's failure was "not sent: rate limited".
func TestOneProjectCannotSilenceAnothersNotifications(t *testing.T) {
	slow := server(t, false, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	})
	failing := newReceiver(t, http.StatusInternalServerError)
	b := newReceiver(t, http.StatusOK)
	results := &tally{}
	w, _ := newWebhooks(t, notify.Options{Timeout: 50 * time.Millisecond, Counted: results.count})
	ctx := context.Background()

	var refused, limited int
	for i := range 100 {
		_, err := w.Notify(ctx, failureOf(fmt.Sprintf("a/refused-%d", i), "http://10.0.0.1/hook"))
		if err != nil && strings.Contains(err.Error(), "destination 10.0.0.1 refused") {
			refused++
		}
	}
	for i := range 100 {
		for kind, hook := range map[string]string{"slow": slow.URL, "failing": failing.URL} {
			_, err := w.Notify(ctx, failureOf(fmt.Sprintf("a/%s-%d", kind, i), hook+"/hook"))
			if err != nil && strings.HasPrefix(err.Error(), "not sent: rate limited (at most 20 notifications a minute per project)") {
				limited++
			}
		}
	}
	if refused != 100 || limited != 180 || len(failing.got()) != 10 {
		t.Errorf("project a: %d refused, %d rate limited, %d posted to the failing webhook; want 100 refused (spending nothing), 180 past its 20 a minute, 10",
			refused, limited, len(failing.got()))
	}
	outcome, err := w.Notify(ctx, failureOf("b/nightly", b.URL+"/hook"))
	if err != nil || len(b.got()) != 1 {
		t.Fatalf("project b's failure: %q, %v, %d posts; want it delivered", outcome, err, len(b.got()))
	}
	if got := results.of(notify.Delivered); got != 1 {
		t.Errorf("%d delivered; want b's alone", got)
	}
}

// TestNoNumberOfNoisyProjectsSilencesAQuietOne: ten projects spending
// their whole share take the server-wide budget; a project that has sent
// nothing in the minute still sends its first, not its second, and a
// minute later every budget is back.
func TestNoNumberOfNoisyProjectsSilencesAQuietOne(t *testing.T) {
	r := newReceiver(t, http.StatusOK)
	w, clk := newWebhooks(t, notify.Options{PerProject: 10, Total: 30})
	ctx := context.Background()
	sent := 0
	for p := range 10 {
		for j := range 10 {
			if _, err := w.Notify(ctx, failureOf(fmt.Sprintf("noisy%d/job%d", p, j), r.URL+"/hook")); err == nil {
				sent++
			}
		}
	}
	// Each noisy project's first is let through past the total, as the
	// quiet project's is below: 30, then one each for the other seven.
	if sent != 37 {
		t.Errorf("the noisy projects sent %d; want 30 in all and the first of each of the other 7", sent)
	}
	if _, err := w.Notify(ctx, failureOf("quiet/first", r.URL+"/hook")); err != nil {
		t.Errorf("a quiet project's first notification: %v; want it sent", err)
	}
	_, err := w.Notify(ctx, failureOf("quiet/second", r.URL+"/hook"))
	if err == nil || !strings.HasPrefix(err.Error(), "not sent: rate limited (at most 30 notifications a minute in all") {
		t.Errorf("its second: %v; want it held back by the total", err)
	}
	clk.Advance(time.Minute + time.Second)
	if _, err := w.Notify(ctx, failureOf("noisy0/job0", r.URL+"/hook")); err != nil {
		t.Errorf("a minute later: %v; want the budgets back", err)
	}
}
