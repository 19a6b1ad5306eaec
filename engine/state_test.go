package engine

import (
	"context"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/noop"
	"github.com/sundial-cron/sundial/task"
)

type dropQueue struct{}

func (dropQueue) Post(context.Context, []task.Task) error { return nil }

// The state a job's memo holds is the one the store holds: the memo the
// SQLite store hands back is of the bytes in the file, encodes to them,
// and is free of the monotonic clock readings a decoded state never has,
// even on a clock that gives them (time.Now). The store holds the state
// once: the record it hands back with the memo has no EncodedState.
func TestMemoIsTheStoredState(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "sundial.db"), sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e := New(st, dropQueue{}, map[string]targets.Target{"noop": noop.Target{}}, Options{Now: time.Now})
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
	var inTx *store.JobRecord
	if _, err := st.Update(ctx, "p/j", func(tx store.Tx) error {
		inTx, err = tx.Job()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	m, ok := inTx.Memo.(*stateMemo)
	if !ok {
		t.Fatalf("the job came back with memo %T, want *stateMemo", inTx.Memo)
	}
	if inTx.EncodedState != nil {
		t.Errorf("the store holds the state twice: as the memo and as %s", inTx.EncodedState)
	}
	if m.encoded != digestOf(job.EncodedState) {
		t.Errorf("the memo is of a state other than the store's %s", job.EncodedState)
	}
	cs := m.s.unpack()
	if b, err := encodeJobState(cs); err != nil || string(b) != string(job.EncodedState) {
		t.Errorf("the memo's state encodes to %s (%v), the store holds %s", b, err, job.EncodedState)
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
