package statemachine_test

import (
	"reflect"
	"slices"
	"testing"

	sm "github.com/sundial-cron/sundial/statemachine"
)

// A step on a clone leaves the original as it was: the engine hands out
// clones of the states it caches.
func TestCloneSharesNothing(t *testing.T) {
	t.Parallel()
	job := func() sm.JobState {
		return sm.JobState{
			State:    sm.Running,
			Pending:  &sm.Occurrence{ID: "p", At: at(minute)},
			Active:   []sm.Invocation{{Occurrence: sm.Occurrence{ID: "a", At: t0}, Attempt: 1, Status: sm.StatusRunning}},
			Backfill: &sm.Backfill{From: at(-hour), To: t0, Next: at(-hour)},
		}
	}
	orig, want := job(), job()
	c := orig.Clone()
	if !reflect.DeepEqual(c, orig) {
		t.Fatalf("Clone() = %+v, want %+v", c, orig)
	}
	c.Pending.At = at(hour)
	c.Backfill.Next = t0
	c.Active[0].Status = sm.StatusLaunching
	c.Active = append(c.Active[:1], sm.Invocation{Attempt: 2})
	if !reflect.DeepEqual(orig, want) {
		t.Errorf("after changing the clone, the original is %+v, want %+v", orig, want)
	}
}

// Clone copies the fields that refer to memory by name: a new one must be
// added to it, or a cached state would change under its cache.
func TestCloneKnowsEveryReferenceField(t *testing.T) {
	t.Parallel()
	var refs []string
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			elem := f.Type
			switch f.Type.Kind() {
			case reflect.Pointer, reflect.Slice:
				refs = append(refs, prefix+f.Name)
				elem = f.Type.Elem()
			case reflect.Map, reflect.Chan, reflect.Func, reflect.Interface:
				refs = append(refs, prefix+f.Name)
			}
			// What the copied elements hold is copied by value only if
			// they hold no references of their own.
			if elem.Kind() == reflect.Struct && elem.PkgPath() == typ.PkgPath() {
				walk(prefix+f.Name+".", elem)
			}
		}
	}
	walk("", reflect.TypeFor[sm.JobState]())
	if want := []string{"Pending", "Active", "Backfill"}; !slices.Equal(refs, want) {
		t.Errorf("statemachine.JobState's reference fields are %q; Clone copies %q", refs, want)
	}
}
