package noop_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/target"
	"github.com/sundial-cron/sundial/target/noop"
)

func request(spec string) target.Request {
	req := target.Request{Key: "p/job/inv-1", JobID: "p/job", Invocation: "inv-1", Attempt: 1}
	if spec != "" {
		req.Spec = json.RawMessage(spec)
	}
	return req
}

func TestLaunch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		spec        string
		want        target.Status
		wantMessage string // a substring of the message
	}{
		{"no spec succeeds", "", target.Succeeded, "done"},
		{"an empty spec succeeds", `{}`, target.Succeeded, "done"},
		{"fail: false succeeds", `{"fail": false}`, target.Succeeded, "done"},
		{"fail: true fails", `{"fail": true}`, target.Failed, "failing as asked"},
		{"a short sleep then succeeds", `{"sleep": "20ms"}`, target.Succeeded, "done"},
		{"a short sleep then fails when asked to", `{"sleep": "20ms", "fail": true}`, target.Failed, "failing as asked"},
		{"a spec that is not JSON fails", `{"sleep":`, target.Failed, "noop: bad spec"},
		{"a spec that is not an object fails", `[1, 2]`, target.Failed, "noop: bad spec"},
		{"a sleep that is not a string fails", `{"sleep": 5}`, target.Failed, "noop: bad spec"},
		{"fail that is not a bool fails", `{"fail": "yes"}`, target.Failed, "noop: bad spec"},
		{"a sleep that is not a duration fails", `{"sleep": "soon"}`, target.Failed, `noop: bad sleep "soon"`},
		{"a sleep without a unit fails", `{"sleep": "20"}`, target.Failed, `noop: bad sleep "20"`},
		{"a negative sleep fails", `{"sleep": "-1s"}`, target.Failed, `noop: bad sleep "-1s"`},
		{"an unknown field fails", `{"slep": "1s"}`, target.Failed, `unknown field "slep"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := noop.Target{}.Launch(t.Context(), request(tc.spec))
			if res.Status != tc.want || !strings.Contains(res.Message, tc.wantMessage) {
				t.Errorf("Launch(%s) = %v %q; want %v with a message containing %q", tc.spec, res.Status, res.Message, tc.want, tc.wantMessage)
			}
			// Check refuses exactly the specs Launch cannot run, so a bad
			// spec is caught in config validation, before any launch.
			err := noop.Target{}.Check(json.RawMessage(tc.spec))
			if bad := tc.wantMessage != "done" && tc.wantMessage != "failing as asked"; bad != (err != nil) {
				t.Errorf("Check(%s) = %v; want an error: %v", tc.spec, err, bad)
			} else if err != nil && !strings.Contains(err.Error(), tc.wantMessage) {
				t.Errorf("Check(%s) = %v; want it to contain %q", tc.spec, err, tc.wantMessage)
			}
		})
	}
}

// A context that ends first ends the sleep, and the attempt fails saying
// why. The sleeps are far longer than any test run, so only the context can
// have ended them.
func TestLaunchSleepEndsWithItsContext(t *testing.T) {
	t.Parallel()
	cause := errors.New("the job's timeout")
	for _, tc := range []struct {
		name        string
		ctx         func(t *testing.T) context.Context
		wantMessage string
	}{
		{"a cancelled context", func(t *testing.T) context.Context {
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			return ctx
		}, context.Canceled.Error()},
		{"an expired deadline", func(t *testing.T) context.Context {
			ctx, cancel := context.WithDeadline(t.Context(), time.Unix(0, 0))
			t.Cleanup(cancel)
			return ctx
		}, context.DeadlineExceeded.Error()},
		{"a context cancelled with a cause", func(t *testing.T) context.Context {
			ctx, cancel := context.WithCancelCause(t.Context())
			cancel(cause)
			return ctx
		}, cause.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := noop.Target{}.Launch(tc.ctx(t), request(`{"sleep": "1h"}`))
			if res.Status != target.Failed || !strings.Contains(res.Message, tc.wantMessage) {
				t.Errorf("Launch = %v %q; want Failed with a message containing %q", res.Status, res.Message, tc.wantMessage)
			}
		})
	}
}

// The context is cancelled by another goroutine, as the engine does when
// an attempt is aborted or times out.
func TestLaunchSleepEndsWhenCancelledFromAnotherGoroutine(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan target.Result)
	go func() { done <- noop.Target{}.Launch(ctx, request(`{"sleep": "1h"}`)) }()
	cancel()
	if res := <-done; res.Status != target.Failed || !strings.Contains(res.Message, context.Canceled.Error()) {
		t.Errorf("Launch = %v %q; want Failed: %v", res.Status, res.Message, context.Canceled)
	}
}
