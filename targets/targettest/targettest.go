// Package targettest is the conformance suite of targets.Target: every
// target runs Run from its own tests, against real far sides (loopback
// HTTP servers, real processes), and must pass it unchanged.
//
// What the engine may rely on of any target: a launch ends Succeeded,
// Failed or Running, never panics, and fails with a one-line message when
// its spec is bad or its context has ended; an ended context starts
// nothing, and work that outlasts its context ends with it; the
// idempotency key reaches the far side; the log is bounded; launches of
// different keys do not interfere; Abort of an attempt that is not running
// is not an error; Resolve answers or says ErrUnknown. Where targets differ
// the difference is a field of Harness, and the suite checks each target
// against what it declares:
//
//   - Launched: a synchronous target ends a successful launch Succeeded,
//     and says so (targets.Synchronous); an asynchronous one (Swarming)
//     says Running.
//   - Hang's start signal: a target with a far side says when the work
//     began; noop has none, and the suite ends the context at once.
//   - Witness: a target with a far side carries the key there (url_fetch
//     in the Sundial-Invocation-Id header, command in
//     SUNDIAL_INVOCATION_ID); noop has no far side.
//   - LogLimit: the most bytes of Log, the target's own notes included;
//     noop keeps no log.
//   - BadSpecs and LineBreaks: which fields a target checks, and where its
//     messages quote what a spec says.
//   - Async: an asynchronous target says how its far side ends a
//     launched attempt and what it pushed; the suite then checks that
//     Resolve (what a poll asks) reports the end, that the push names
//     the attempt with a valid token, exactly once, and that polls and
//     pushes racing agree; Abort cancels the remote work. The engine's
//     tests check that an end reported both ways is recorded once.
//   - Checker, Aborter and Resolver are optional; a subtest about one a
//     target does not implement is skipped, saying so.
package targettest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/targets"
)

// Harness is what the suite needs of one target, and how it differs from
// the others (see the package comment). Every func may be called more than
// once in a subtest, each call making a far side of its own, which it
// releases when the test ends (t.Cleanup).
type Harness struct {
	// New returns the target under test.
	New func(t *testing.T) targets.Target
	// Succeeding returns a spec the Checker accepts whose launch succeeds.
	Succeeding func(t *testing.T) json.RawMessage
	// Launched is what a launch of Succeeding returns: targets.Succeeded
	// for a synchronous target, targets.Running for one whose end is
	// reported later.
	Launched targets.Status
	// Failing returns a spec the Checker accepts whose launch fails: the
	// far side answers with a failure.
	Failing func(t *testing.T) json.RawMessage
	// Hang returns a spec whose work lasts until its context ends, and a
	// channel closed once the work has begun on the far side. A nil
	// channel says the target has no far side to signal from; the suite
	// then ends the context without waiting.
	Hang func(t *testing.T) (spec json.RawMessage, started <-chan struct{})
	// Witness returns a spec whose launches reach a far side that records
	// the idempotency key each carried, and keys, which returns the keys
	// recorded so far. Nil: the target has no far side, and carries the
	// key nowhere.
	Witness func(t *testing.T) (spec json.RawMessage, keys func() []string)
	// Noisy returns a spec the Checker accepts whose far side answers with
	// far more output than LogLimit. Nil when LogLimit is 0.
	Noisy func(t *testing.T) json.RawMessage
	// LogLimit is the most bytes a Result.Log may hold, the target's own
	// notes (a status line, a cut marker) included; 0: the target keeps
	// no log, and every Log is empty.
	LogLimit int
	// BadSpecs are specs the Checker refuses, one field at fault in each.
	BadSpecs []BadSpec
	// LineBreaks are specs the Checker accepts that hold line breaks where
	// a message could quote them (a program's name, a directory, a URL).
	LineBreaks []json.RawMessage
	// Async is set for a target whose launches return Running.
	Async *Async
}

// Async is what the suite needs of an asynchronous target's far side.
type Async struct {
	// Finish ends the far side's work of a launched attempt, succeeded or
	// not, and returns once its push (if the target pushes) was delivered.
	Finish func(t *testing.T, req targets.Request, succeeded bool)
	// Pushes returns the refs of the pushes delivered so far whose token
	// is valid for the ref; invalid returns how many had a token that was
	// not. Nil: the target does not push, and ends are found by polls.
	Pushes func(t *testing.T) (valid []targets.PushRef, invalid int)
}

// BadSpec is a spec the Checker refuses.
type BadSpec struct {
	Spec string
	// Field is what the error must contain: the field's name, or for a
	// value of the wrong type the words of the error that name it.
	Field string
}

// Run runs the suite. Subtests run in parallel, each on its own target.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(t *testing.T, h Harness)
	}{
		{"a succeeding spec launches as Launched", testSucceeding},
		{"a target says it is synchronous exactly when its launches end within the call", testSynchronous},
		{"a failing spec launches as Failed", testFailing},
		{"a context ended before Launch starts nothing and fails", testEndedContext},
		{"work that outlasts its context ends Failed, saying why", testOutlastsContext},
		{"the idempotency key reaches the far side", testKeyReachesFarSide},
		{"Message is one line", testMessageOneLine},
		{"Log is bounded", testLogBounded},
		{"Check names the field of a bad spec and Launch refuses it alike", testBadSpecs},
		{"a spec that does not decode fails Launch and does not panic", testUndecodable},
		{"Abort of an attempt that is not running is not an error", testAbortNotRunning},
		{"Abort ends a running attempt Failed", testAbortRunning},
		{"Resolve answers or says ErrUnknown, and does not panic", testResolve},
		{"concurrent launches of different keys each get their own result", testConcurrent},
		{"an async target's end is what Resolve reports once the far side ends it", testAsyncEnd},
		{"an async target's end arrives exactly once however push and poll interleave", testAsyncPushAndPoll},
		{"Abort of an async target's running attempt ends its remote work", testAsyncAbort},
		{"ending one key's attempt leaves another's running", testEndOneLeavesOther},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, h)
		})
	}
}

// t0 is the occurrence of every request.
var t0 = time.Date(2026, 3, 8, 2, 30, 0, 0, time.FixedZone("EST", -5*3600))

// request is attempt 1 of invocation inv of the job p/job.
func request(inv string, spec json.RawMessage) targets.Request {
	return targets.Request{
		Key: "p/job/" + inv, JobID: "p/job", Invocation: inv,
		Occurrence: t0, Attempt: 1, Spec: spec,
	}
}

// launch calls Launch, turning a panic into a test failure that names the
// spec, and checks the result's shape.
func launch(t *testing.T, h Harness, tgt targets.Target, ctx context.Context, req targets.Request) (res targets.Result) {
	t.Helper()
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("Launch(%s) panicked: %v", req.Spec, p)
			}
		}()
		res = tgt.Launch(ctx, req)
	}()
	checkShape(t, h, req, res)
	return res
}

// checkShape checks what holds of every result: a known status, a
// one-line message (not empty on failure) and a bounded log.
func checkShape(t *testing.T, h Harness, req targets.Request, res targets.Result) {
	t.Helper()
	switch res.Status {
	case targets.Succeeded, targets.Failed, targets.Running:
	default:
		t.Errorf("Launch(%s) = status %d; want Succeeded, Failed or Running", req.Spec, res.Status)
	}
	if strings.ContainsAny(res.Message, "\r\n") {
		t.Errorf("Launch(%s): Message %q holds a line break; want one line", req.Spec, res.Message)
	}
	if res.Status == targets.Failed && strings.TrimSpace(res.Message) == "" {
		t.Errorf("Launch(%s) = Failed with no message; want one saying why", req.Spec)
	}
	if len(res.Log) > h.LogLimit {
		t.Errorf("Launch(%s): Log holds %d bytes; want at most LogLimit, %d", req.Spec, len(res.Log), h.LogLimit)
	}
}

// check calls the target's Checker, if it has one; ok is false if not.
func check(t *testing.T, tgt targets.Target, spec json.RawMessage) (err error, ok bool) {
	t.Helper()
	c, ok := tgt.(targets.Checker)
	if !ok {
		return nil, false
	}
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("Check(%s) panicked: %v", spec, p)
		}
	}()
	return c.Check(spec), true
}

// mustAccept fails the test if the Checker refuses a spec the harness says
// it accepts: every other assertion about that spec would be moot.
func mustAccept(t *testing.T, tgt targets.Target, spec json.RawMessage) {
	t.Helper()
	if err, _ := check(t, tgt, spec); err != nil {
		t.Fatalf("Check(%s) = %v; the harness says it accepts it", spec, err)
	}
}

func statusName(s targets.Status) string {
	switch s {
	case targets.Succeeded:
		return "Succeeded"
	case targets.Failed:
		return "Failed"
	case targets.Running:
		return "Running"
	}
	return fmt.Sprintf("Status(%d)", s)
}

func testSucceeding(t *testing.T, h Harness) {
	tgt, spec := h.New(t), h.Succeeding(t)
	mustAccept(t, tgt, spec)
	if res := launch(t, h, tgt, t.Context(), request("inv-1", spec)); res.Status != h.Launched {
		t.Errorf("Launch(%s) = %s %q; want %s", spec, statusName(res.Status), res.Message, statusName(h.Launched))
	}
}

// testSynchronous checks the target's word against its launches: the
// engine records a synchronous target's attempts RUNNING for the whole
// call, and an asynchronous one's LAUNCHING until it accepts them.
func testSynchronous(t *testing.T, h Harness) {
	_, says := h.New(t).(targets.Synchronous)
	if ends := h.Launched != targets.Running; says != ends {
		t.Errorf("the target implements targets.Synchronous: %v; its launches end within the call (Launched %s): %v", says, statusName(h.Launched), ends)
	}
	if says && h.Async != nil {
		t.Errorf("the target implements targets.Synchronous, yet the harness describes an asynchronous far side")
	}
}

func testFailing(t *testing.T, h Harness) {
	tgt, spec := h.New(t), h.Failing(t)
	mustAccept(t, tgt, spec)
	if res := launch(t, h, tgt, t.Context(), request("inv-1", spec)); res.Status != targets.Failed {
		t.Errorf("Launch(%s) = %s %q; want Failed", spec, statusName(res.Status), res.Message)
	}
}

// endedContexts are contexts ended before the launch, each in one of the
// ways the engine ends them, with what the message must say.
var endedContexts = []struct {
	name string
	ctx  func(t *testing.T) context.Context
	want string
}{
	{"cancelled", func(t *testing.T) context.Context {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		return ctx
	}, context.Canceled.Error()},
	{"past its deadline", func(t *testing.T) context.Context {
		ctx, cancel := context.WithDeadline(t.Context(), time.Unix(0, 0))
		t.Cleanup(cancel)
		return ctx
	}, context.DeadlineExceeded.Error()},
	{"cancelled with a cause", func(t *testing.T) context.Context {
		ctx, cancel := context.WithCancelCause(t.Context())
		cancel(errJobTimeout)
		return ctx
	}, errJobTimeout.Error()},
}

var errJobTimeout = errors.New("targettest: the job's timeout of 10m")

// An ended context fails the launch saying why, and, where the far side
// can be watched, nothing reaches it.
func testEndedContext(t *testing.T, h Harness) {
	for _, tc := range endedContexts {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tgt := h.New(t)
			spec, keys := h.Succeeding(t), func() []string { return nil }
			if h.Witness != nil {
				spec, keys = h.Witness(t)
			}
			res := launch(t, h, tgt, tc.ctx(t), request("inv-1", spec))
			if res.Status != targets.Failed || !strings.Contains(res.Message, tc.want) {
				t.Errorf("Launch = %s %q; want Failed with a message containing %q", statusName(res.Status), res.Message, tc.want)
			}
			if got := keys(); len(got) != 0 {
				t.Errorf("the far side saw keys %q; want nothing started", got)
			}
		})
	}
}

// hang launches a Hang spec in a goroutine and returns once its work has
// begun (or at once, if the harness has no signal), with the result to
// come. A launch that returns before its work began fails the test.
func hang(t *testing.T, h Harness, tgt targets.Target, ctx context.Context, inv string) (targets.Request, <-chan targets.Result) {
	t.Helper()
	spec, started := h.Hang(t)
	mustAccept(t, tgt, spec)
	req := request(inv, spec)
	done := make(chan targets.Result, 1)
	go func() { done <- tgt.Launch(ctx, req) }()
	if started != nil {
		select {
		case <-started:
		case res := <-done:
			t.Fatalf("Launch(%s) = %s %q before its work began", spec, statusName(res.Status), res.Message)
		}
	}
	return req, done
}

// The context is ended from another goroutine once the work has begun, as
// the engine's timeout does; the work lasts until its context ends, so
// only the context can have ended the launch. No clock is read: a launch
// that ignores its context never returns and the test times out.
func testOutlastsContext(t *testing.T, h Harness) {
	for _, cause := range []error{context.DeadlineExceeded, errJobTimeout} {
		t.Run(cause.Error(), func(t *testing.T) {
			t.Parallel()
			tgt := h.New(t)
			ctx, cancel := context.WithCancelCause(t.Context())
			defer cancel(nil)
			req, done := hang(t, h, tgt, ctx, "inv-1")
			cancel(cause)
			res := <-done
			checkShape(t, h, req, res)
			if res.Status != targets.Failed || !strings.Contains(res.Message, cause.Error()) {
				t.Errorf("Launch = %s %q; want Failed with a message containing %q", statusName(res.Status), res.Message, cause)
			}
		})
	}
}

func testKeyReachesFarSide(t *testing.T, h Harness) {
	if h.Witness == nil {
		t.Skip("the harness says the target has no far side to carry the key to")
	}
	tgt := h.New(t)
	spec, keys := h.Witness(t)
	mustAccept(t, tgt, spec)
	req := request("inv-7", spec)
	req.Attempt = 3 // the key is the occurrence's, the same for every attempt
	if res := launch(t, h, tgt, t.Context(), req); res.Status != h.Launched {
		t.Fatalf("Launch(%s) = %s %q; want %s", spec, statusName(res.Status), res.Message, statusName(h.Launched))
	}
	if got := keys(); !slices.Equal(got, []string{req.Key}) {
		t.Errorf("the far side saw keys %q; want [%q]", got, req.Key)
	}
}

func testMessageOneLine(t *testing.T, h Harness) {
	tgt := h.New(t)
	specs := []json.RawMessage{h.Succeeding(t), h.Failing(t)}
	if h.Noisy != nil {
		specs = append(specs, h.Noisy(t))
	}
	for _, spec := range h.LineBreaks {
		mustAccept(t, tgt, spec)
		specs = append(specs, spec)
	}
	for i, spec := range specs {
		launch(t, h, tgt, t.Context(), request(fmt.Sprintf("inv-%d", i), spec)) // checkShape asserts it
	}
}

func testLogBounded(t *testing.T, h Harness) {
	if h.Noisy == nil {
		if h.LogLimit != 0 {
			t.Fatalf("the harness gives LogLimit %d and no Noisy spec to test it with", h.LogLimit)
		}
		// The target keeps no log: checkShape holds every Log to 0 bytes.
		for i, spec := range []json.RawMessage{h.Succeeding(t), h.Failing(t)} {
			launch(t, h, h.New(t), t.Context(), request(fmt.Sprintf("inv-%d", i), spec))
		}
		return
	}
	tgt, spec := h.New(t), h.Noisy(t)
	mustAccept(t, tgt, spec)
	res := launch(t, h, tgt, t.Context(), request("inv-1", spec)) // checkShape asserts the bound
	if len(res.Log) == 0 {
		t.Errorf("Launch(%s) kept no log of a noisy far side; want its output, cut to at most %d bytes", spec, h.LogLimit)
	}
}

// A bad spec is refused by Check naming the field, and Launch refuses it
// with the same words, so what config validation says and what a failed
// invocation says agree.
func testBadSpecs(t *testing.T, h Harness) {
	tgt := h.New(t)
	if _, ok := tgt.(targets.Checker); !ok {
		t.Skip("the target has no Checker")
	}
	if len(h.BadSpecs) == 0 {
		t.Fatal("the target has a Checker and the harness gives no bad specs to test it with")
	}
	for _, bad := range h.BadSpecs {
		spec := json.RawMessage(bad.Spec)
		err, _ := check(t, tgt, spec)
		if err == nil || !strings.Contains(err.Error(), bad.Field) {
			t.Errorf("Check(%s) = %v; want an error naming %q", spec, err, bad.Field)
			continue
		}
		if res := launch(t, h, tgt, t.Context(), request("inv-1", spec)); res.Status != targets.Failed || res.Message != err.Error() {
			t.Errorf("Launch(%s) = %s %q; want Failed %q, as Check says", spec, statusName(res.Status), res.Message, err)
		}
	}
}

// undecodable are specs no target's spec decodes from.
var undecodable = []string{
	`{`,
	`{"a":`,
	`[1, 2]`,
	`"a string"`,
	`42`,
	`true`,
	`{} {}`,
	"\xff\xfe",
	`{"` + strings.Repeat("[", 10000),
}

func testUndecodable(t *testing.T, h Harness) {
	tgt := h.New(t)
	for _, s := range undecodable {
		spec := json.RawMessage(s)
		err, checked := check(t, tgt, spec)
		if checked && err == nil {
			t.Errorf("Check(%.40q) = nil; want an error", s)
		}
		res := launch(t, h, tgt, t.Context(), request("inv-1", spec))
		if res.Status != targets.Failed {
			t.Errorf("Launch(%.40q) = %s %q; want Failed", s, statusName(res.Status), res.Message)
		}
		if checked && err != nil && res.Message != err.Error() {
			t.Errorf("Launch(%.40q) = %q; want Check's error %q", s, res.Message, err)
		}
	}
}

func testAbortNotRunning(t *testing.T, h Harness) {
	tgt := h.New(t)
	a, ok := tgt.(targets.Aborter)
	if !ok {
		t.Skip("the target has no Aborter")
	}
	spec := h.Succeeding(t)
	never := request("inv-never", spec)
	if err := a.Abort(t.Context(), never); err != nil {
		t.Errorf("Abort of an attempt never launched = %v; want nil", err)
	}
	ended := request("inv-ended", spec)
	if res := launch(t, h, tgt, t.Context(), ended); res.Status == targets.Running {
		t.Skip("the launch runs on; an ended attempt cannot be made here")
	}
	for i := range 2 {
		if err := a.Abort(t.Context(), ended); err != nil {
			t.Errorf("Abort %d of an attempt that has ended = %v; want nil", i+1, err)
		}
	}
}

func testAbortRunning(t *testing.T, h Harness) {
	tgt := h.New(t)
	a, ok := tgt.(targets.Aborter)
	if !ok {
		t.Skip("the target has no Aborter")
	}
	if h.Async != nil {
		t.Skip("an async target's launch does not run the work: its Abort is tested on the remote work")
	}
	req, done := hang(t, h, tgt, t.Context(), "inv-1")
	if err := a.Abort(t.Context(), req); err != nil {
		t.Errorf("Abort = %v; want nil", err)
	}
	res := <-done
	checkShape(t, h, req, res)
	if res.Status != targets.Failed {
		t.Errorf("Launch of an aborted attempt = %s %q; want Failed", statusName(res.Status), res.Message)
	}
}

// resolve calls Resolve, turning a panic into a test failure.
func resolve(t *testing.T, r targets.Resolver, req targets.Request) (launched bool, res targets.Result, err error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("Resolve(%s, %s) panicked: %v", req.Key, req.Spec, p)
		}
	}()
	return r.Resolve(t.Context(), req)
}

// Resolve may always say ErrUnknown; an answer it gives must be true.
func testResolve(t *testing.T, h Harness) {
	tgt := h.New(t)
	r, ok := tgt.(targets.Resolver)
	if !ok {
		t.Skip("the target has no Resolver")
	}
	answers := func(what string, err error) bool {
		t.Helper()
		if err != nil && !errors.Is(err, targets.ErrUnknown) {
			t.Errorf("Resolve of %s = %v; want an answer or ErrUnknown", what, err)
		}
		return err == nil
	}
	never := request("inv-never", h.Succeeding(t))
	if launched, res, err := resolve(t, r, never); answers("a key never launched", err) && launched {
		t.Errorf("Resolve of a key never launched = launched, %s %q; want not launched", statusName(res.Status), res.Message)
	}
	done := request("inv-done", h.Succeeding(t))
	want := launch(t, h, tgt, t.Context(), done).Status
	if launched, res, err := resolve(t, r, done); answers("a launched key", err) {
		if !launched || res.Status != want && res.Status != targets.Running {
			t.Errorf("Resolve of a launched key = launched %v, %s %q; want launched, %s or Running", launched, statusName(res.Status), res.Message, statusName(want))
		}
	}
	for _, s := range undecodable {
		resolve(t, r, request("inv-bad", json.RawMessage(s)))
	}
}

// Launches of different keys run at once on one target: succeeding and
// failing ones interleaved, and, where the far side can be watched, each
// key reaches it exactly once.
func testConcurrent(t *testing.T, h Harness) {
	tgt := h.New(t)
	type launchCase struct {
		req  targets.Request
		want targets.Status
	}
	var cases []launchCase
	for i := range 4 {
		cases = append(cases,
			launchCase{request(fmt.Sprintf("ok-%d", i), h.Succeeding(t)), h.Launched},
			launchCase{request(fmt.Sprintf("fail-%d", i), h.Failing(t)), targets.Failed})
	}
	var keys func() []string
	if h.Witness != nil {
		var spec json.RawMessage
		spec, keys = h.Witness(t)
		for i := range 4 {
			cases = append(cases, launchCase{request(fmt.Sprintf("seen-%d", i), spec), h.Launched})
		}
	}
	results := make([]targets.Result, len(cases))
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Go(func() { results[i] = tgt.Launch(t.Context(), c.req) })
	}
	wg.Wait()
	var wantKeys []string
	for i, c := range cases {
		checkShape(t, h, c.req, results[i])
		if results[i].Status != c.want {
			t.Errorf("Launch of %s = %s %q; want %s", c.req.Key, statusName(results[i].Status), results[i].Message, statusName(c.want))
		}
		if strings.HasPrefix(c.req.Invocation, "seen-") {
			wantKeys = append(wantKeys, c.req.Key)
		}
	}
	if keys != nil {
		got := slices.Sorted(slices.Values(keys()))
		if !slices.Equal(got, wantKeys) {
			t.Errorf("the far side saw keys %q; want each of %q once", got, wantKeys)
		}
	}
}

// Two attempts of different keys hang; ending the first (by its context,
// and by Abort where the target has one) ends it alone.
func testEndOneLeavesOther(t *testing.T, h Harness) {
	ends := []struct {
		name string
		end  func(t *testing.T, tgt targets.Target, cancel context.CancelFunc, req targets.Request)
	}{
		{"by its context", func(_ *testing.T, _ targets.Target, cancel context.CancelFunc, _ targets.Request) { cancel() }},
		{"by Abort", func(t *testing.T, tgt targets.Target, _ context.CancelFunc, req targets.Request) {
			a, ok := tgt.(targets.Aborter)
			if !ok {
				t.Skip("the target has no Aborter")
			}
			if h.Async != nil {
				t.Skip("an async target's launch does not run the work: its Abort is tested on the remote work")
			}
			if err := a.Abort(t.Context(), req); err != nil {
				t.Errorf("Abort = %v; want nil", err)
			}
		}},
	}
	for _, e := range ends {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			tgt := h.New(t)
			ctxA, cancelA := context.WithCancel(t.Context())
			defer cancelA()
			ctxB, cancelB := context.WithCancel(t.Context())
			defer cancelB()
			reqB, doneB := hang(t, h, tgt, ctxB, "inv-b")
			reqA, doneA := hang(t, h, tgt, ctxA, "inv-a")
			e.end(t, tgt, cancelA, reqA)
			if res := <-doneA; res.Status != targets.Failed {
				t.Errorf("the ended launch = %s %q; want Failed", statusName(res.Status), res.Message)
			}
			// A has returned; B's work lasts until its context ends, so B
			// has not returned unless ending A ended it too.
			select {
			case res := <-doneB:
				t.Errorf("ending %s ended %s too: %s %q", reqA.Key, reqB.Key, statusName(res.Status), res.Message)
			default:
			}
			cancelB()
			if res := <-doneB; res.Status != targets.Failed {
				t.Errorf("the other launch, once its context ended = %s %q; want Failed", statusName(res.Status), res.Message)
			}
		})
	}
}

// asyncLaunch launches a Succeeding spec of an async target and checks it
// is Running.
func asyncLaunch(t *testing.T, h Harness, inv string) (targets.Target, targets.Resolver, targets.Request) {
	t.Helper()
	if h.Async == nil {
		t.Skip("the target is synchronous")
	}
	tgt := h.New(t)
	r, ok := tgt.(targets.Resolver)
	if !ok {
		t.Fatal("an async target must be a Resolver: polls ask it how a running attempt is doing")
	}
	req := request(inv, h.Succeeding(t))
	if res := launch(t, h, tgt, t.Context(), req); res.Status != targets.Running {
		t.Fatalf("Launch = %s %q; want Running", statusName(res.Status), res.Message)
	}
	return tgt, r, req
}

func testAsyncEnd(t *testing.T, h Harness) {
	for _, succeeded := range []bool{true, false} {
		t.Run(fmt.Sprintf("succeeded=%v", succeeded), func(t *testing.T) {
			t.Parallel()
			_, r, req := asyncLaunch(t, h, "inv-1")
			if launched, res, err := resolve(t, r, req); err != nil || !launched || res.Status != targets.Running {
				t.Fatalf("Resolve before the end = %v, %s %q, %v; want launched, Running", launched, statusName(res.Status), res.Message, err)
			}
			h.Async.Finish(t, req, succeeded)
			want := targets.Failed
			if succeeded {
				want = targets.Succeeded
			}
			launched, res, err := resolve(t, r, req)
			if err != nil || !launched || res.Status != want {
				t.Fatalf("Resolve after the end = %v, %s %q, %v; want launched, %s", launched, statusName(res.Status), res.Message, err, statusName(want))
			}
			checkShape(t, h, req, res)
		})
	}
}

// The far side ends the attempt while polls ask about it: every answer is
// Running or the one end, the end once given stays, and the attempt was
// pushed exactly once, with a valid token.
func testAsyncPushAndPoll(t *testing.T, h Harness) {
	_, r, req := asyncLaunch(t, h, "inv-1")
	const polls = 8
	answers := make([]targets.Result, polls)
	var wg sync.WaitGroup
	ready := make(chan struct{})
	for i := range polls {
		wg.Go(func() {
			<-ready
			_, answers[i], _ = r.Resolve(t.Context(), req)
		})
	}
	close(ready)
	h.Async.Finish(t, req, true)
	wg.Wait()
	for i, a := range answers {
		if a.Status != targets.Running && a.Status != targets.Succeeded {
			t.Errorf("poll %d while the far side ended the attempt = %s %q; want Running or Succeeded", i, statusName(a.Status), a.Message)
		}
	}
	for i := range 3 {
		if _, res, err := resolve(t, r, req); err != nil || res.Status != targets.Succeeded {
			t.Errorf("poll %d after the end = %s %q, %v; want Succeeded", i, statusName(res.Status), res.Message, err)
		}
	}
	if h.Async.Pushes == nil {
		return
	}
	valid, invalid := h.Async.Pushes(t)
	if want := []targets.PushRef{targets.RefOf(req)}; !slices.Equal(valid, want) || invalid != 0 {
		t.Errorf("pushes = %v valid and %d invalid; want exactly %v", valid, invalid, want)
	}
}

func testAsyncAbort(t *testing.T, h Harness) {
	tgt, r, req := asyncLaunch(t, h, "inv-1")
	a, ok := tgt.(targets.Aborter)
	if !ok {
		t.Skip("the target has no Aborter")
	}
	if err := a.Abort(t.Context(), req); err != nil {
		t.Fatalf("Abort = %v; want nil", err)
	}
	if launched, res, err := resolve(t, r, req); err != nil || !launched || res.Status != targets.Failed {
		t.Errorf("Resolve after Abort = %v, %s %q, %v; want launched, Failed", launched, statusName(res.Status), res.Message, err)
	}
	if err := a.Abort(t.Context(), req); err != nil {
		t.Errorf("Abort again = %v; want nil", err)
	}
}
