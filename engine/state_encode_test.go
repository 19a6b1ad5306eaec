package engine

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/statemachine"
)

// TestTheStateEncoderWritesWhatEncodingJSONWrites: a job's stored state is
// compared byte for byte (the memos' digests, the goldens), so the
// hand-written encoder must write exactly what encoding/json writes of
// storedState, for every state: times in any zone, at any precision, or
// zero; strings with quotes, HTML, control characters, non-ASCII text or
// invalid UTF-8; every optional part there or not. A time encoding/json
// refuses (a year past 9999) must be refused by both.
//
// The random states must also reach every field storedState has: a field
// added there and not to appendState fails here until the states here
// set it too.
func TestTheStateEncoderWritesWhatEncodingJSONWrites(t *testing.T) {
	written := map[string]bool{}
	for seed := range uint64(20000) {
		b := checkStateEncoding(t, seed)
		var v any
		if err := json.Unmarshal(b, &v); err == nil {
			jsonPaths(v, "", written)
		}
	}
	fields := map[string]bool{}
	structPaths(reflect.TypeFor[storedState](), "", fields)
	for f := range fields {
		if !written[f] {
			t.Errorf("no random state has storedState's %s: randomState must set it", f)
		}
	}
}

// jsonPaths adds the dotted paths of v's object keys to into; an array's
// elements share its path.
func jsonPaths(v any, prefix string, into map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			into[prefix+k] = true
			jsonPaths(e, prefix+k+".", into)
		}
	case []any:
		for _, e := range v {
			jsonPaths(e, prefix, into)
		}
	}
}

// structPaths adds the dotted paths of the JSON names of t's fields, as
// encoding/json names them, to into.
func structPaths(t reflect.Type, prefix string, into map[string]bool) {
	for f := range t.Fields() {
		if f.Anonymous {
			structPaths(f.Type, prefix, into)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		into[prefix+name] = true
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && ft != reflect.TypeFor[time.Time]() {
			structPaths(ft, prefix+name+".", into)
		}
	}
}

func FuzzTheStateEncoderWritesWhatEncodingJSONWrites(f *testing.F) {
	f.Add(uint64(1))
	f.Fuzz(func(t *testing.T, seed uint64) { checkStateEncoding(t, seed) })
}

// checkStateEncoding encodes the seed's state both ways, and returns what
// encoding/json wrote (nil where it refused the state).
func checkStateEncoding(t *testing.T, seed uint64) []byte {
	s := randomState(rand.New(rand.NewPCG(seed, 3)))
	got, ok := appendState(nil, s)
	want, err := marshalStoredState(s)
	switch {
	case err != nil && ok:
		t.Fatalf("seed %d: encoding/json refused the state (%v), the encoder wrote %s", seed, err, got)
	case err == nil && !ok:
		t.Fatalf("seed %d: the encoder refused a state encoding/json writes as %s", seed, want)
	case err == nil && !bytes.Equal(got, want):
		t.Fatalf("seed %d: the encoder wrote\n%s\nencoding/json\n%s", seed, got, want)
	}
	if enc, err := encodeJobState(s); err == nil && !bytes.Equal(enc, want) {
		t.Fatalf("seed %d: encodeJobState wrote %s, want %s", seed, enc, want)
	}
	return want
}

func randomState(r *rand.Rand) jobState {
	some := func() bool { return r.IntN(2) == 0 }
	var s jobState
	m := &s.m
	m.State = statemachine.State(randomString(r))
	if some() {
		m.Reason = statemachine.Reason{Kind: statemachine.ReasonKind(randomString(r)), Note: randomString(r)}
	}
	m.TickNonce, m.Triggers, m.Runs = randomInt(r), randomInt(r), randomInt(r)
	m.Failures = int(randomInt(r))
	m.TickAt, m.NextAt, m.Cursor = randomTime(r), randomTime(r), randomTime(r)
	m.LastEnded, m.WatchdogTimerTs, m.PausedUntil = randomTime(r), randomTime(r), randomTime(r)
	if some() {
		o := randomOccurrence(r)
		m.Pending = &o
	}
	for range r.IntN(3) {
		m.Active = append(m.Active, statemachine.Invocation{
			Occurrence: randomOccurrence(r), Attempt: int(randomInt(r)), Status: statemachine.Status(randomString(r)),
			Nonce: randomInt(r), Since: randomTime(r), RetryAt: randomTime(r), Deadline: randomTime(r),
			PollNonce: randomInt(r), PollAt: randomTime(r),
		})
	}
	if some() {
		m.Backfill = &statemachine.Backfill{From: randomTime(r), To: randomTime(r), Next: randomTime(r)}
	}
	if some() {
		s.health = Health{TaskFailures: int(randomInt(r)), LastError: randomString(r), LastErrorAt: randomTime(r)}
	}
	for range r.IntN(3) {
		s.audit = append(s.audit, AuditEntry{
			At: randomTime(r), By: access.Identity(randomString(r)), Action: Action(randomString(r)),
			Invocation: randomString(r), Reason: randomString(r), Until: randomTime(r),
		})
	}
	return s
}

func randomOccurrence(r *rand.Rand) statemachine.Occurrence {
	return statemachine.Occurrence{ID: randomString(r), At: randomTime(r), Manual: r.IntN(2) == 0, Backfill: r.IntN(2) == 0}
}

func randomInt(r *rand.Rand) int64 {
	switch r.IntN(4) {
	case 0:
		return 0
	case 1:
		return r.Int64()
	case 2:
		return -r.Int64()
	}
	return r.Int64N(100)
}

var stateZones = []*time.Location{
	time.UTC, time.FixedZone("", 5*3600+30*60), time.FixedZone("far", -23*3600-59*60),
	time.FixedZone("too far", 24*3600), mustZone("America/New_York"), mustZone("Australia/Lord_Howe"),
}

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

func randomTime(r *rand.Rand) time.Time {
	switch r.IntN(8) {
	case 0, 1:
		return time.Time{}
	case 2:
		// Years encoding/json refuses, and the edges of those it writes.
		return time.Date([]int{-1, 0, 9999, 10000, 1}[r.IntN(5)], time.December, 31, 23, 59, 59, 999999999, time.UTC)
	}
	t := time.Unix(1_500_000_000+r.Int64N(1_000_000_000), 0)
	switch r.IntN(3) {
	case 0:
		t = t.Add(time.Duration(r.Int64N(1e9)))
	case 1:
		t = t.Add(time.Duration(r.Int64N(1000)) * time.Millisecond)
	}
	return t.In(stateZones[r.IntN(len(stateZones))])
}

// randomString returns one of the words a state holds, or text that
// encoding/json must escape.
func randomString(r *rand.Rand) string {
	words := []string{
		"", "SCHEDULED", "RUNNING", "20261128T184953Z", "manual-3", "user:ada@example.com",
		`say "hi"`, `back\slash`, "a<b", "c>d", "e&f", "line\nbreak\t\x01", "naïve ☀", "\u2028\u2029", "bad \xff utf-8", "\x7f",
	}
	return words[r.IntN(len(words))]
}
