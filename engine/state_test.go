package engine

import (
	"context"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/target"
	"github.com/sundial-cron/sundial/target/noop"
	"github.com/sundial-cron/sundial/task"
)

type dropQueue struct{}

func (dropQueue) Post(context.Context, []task.Task) error { return nil }

// The state the engine caches for a job is the one the store holds: keyed
// by its bytes, encoding to them, and free of the monotonic clock readings
// a decoded state never has, even on a clock that gives them (time.Now).
func TestCachedStateIsTheStoredOne(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "sundial.db"), sqlite.Options{Synchronous: sqlite.SyncOff})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e := New(st, dropQueue{}, map[string]target.Target{"noop": noop.Target{}}, Options{Now: time.Now})
	if err := e.Define(ctx, "p/j", Definition{Schedule: "triggered", Target: "noop"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Trigger(ctx, "p/j", "user:tester@example.com"); err != nil {
		t.Fatal(err)
	}
	job, err := st.Job(ctx, "p/j")
	if err != nil {
		t.Fatal(err)
	}
	sh := e.cache.shard("p/j")
	sh.mu.Lock()
	c := sh.m["p/j"]
	sh.mu.Unlock()
	if c == nil || !c.hasState {
		t.Fatal("no state cached for the job")
	}
	if c.state != digestOf(job.EncodedState) {
		t.Errorf("the cache holds a state other than the store's %s", job.EncodedState)
	}
	cs := c.s.unpack()
	if b, err := encodeJobState(cs); err != nil || string(b) != string(job.EncodedState) {
		t.Errorf("the cached state encodes to %s (%v), the store holds %s", b, err, job.EncodedState)
	}
	if len(cs.m.Active) == 0 {
		t.Fatal("the trigger left no invocation in the state: the test checks nothing")
	}
	for path, at := range times(reflect.ValueOf(cs.m), "Job") {
		if at != at.Round(0) {
			t.Errorf("%s = %v carries a monotonic clock reading", path, at)
		}
	}
}

// times yields every time.Time in v, by its path.
func times(v reflect.Value, path string) map[string]time.Time {
	out := map[string]time.Time{}
	switch {
	case v.Type() == reflect.TypeFor[time.Time]():
		out[path] = v.Interface().(time.Time)
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			for p, at := range times(v.Field(i), path+"."+v.Type().Field(i).Name) {
				out[p] = at
			}
		}
	case v.Kind() == reflect.Slice:
		for i := range v.Len() {
			for p, at := range times(v.Index(i), path+"["+strconv.Itoa(i)+"]") {
				out[p] = at
			}
		}
	case v.Kind() == reflect.Pointer && !v.IsNil():
		return times(v.Elem(), path)
	}
	return out
}
