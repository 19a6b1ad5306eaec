package postgres

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"
)

// TestInstancesAreListedAndForgottenADayAfterTheyStop: each instance's
// announcement is listed as it said it, the newest start first; a later
// announcement moves its Seen on (an older one never back), and one
// unseen for a day is forgotten at another's announcement.
func TestInstancesAreListedAndForgottenADayAfterTheyStop(t *testing.T) {
	t.Parallel()
	s := open(t)
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	a := Instance{ID: "a-1-x", Host: "a", PID: 1, Version: "v0.2.0", Started: t0, Seen: t0, Settings: map[string]string{"access": "0a1b", "egress": "2c3d"}}
	b := Instance{ID: "b-2-y", Host: "b", PID: 2, Version: "v0.2.1", Started: t0.Add(time.Hour), Seen: t0.Add(time.Hour), Settings: map[string]string{"access": "0a1b", "egress": "ffff"}}
	announce := func(in Instance) {
		t.Helper()
		if err := s.Announce(t.Context(), in); err != nil {
			t.Fatal(err)
		}
	}
	list := func() []Instance {
		t.Helper()
		got, err := s.Instances(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	announce(a)
	announce(b)
	if got, want := list(), []Instance{b, a}; !reflect.DeepEqual(got, want) {
		t.Errorf("listed\n%+v\nwant\n%+v", got, want)
	}

	late := a
	late.Seen = t0.Add(2 * time.Hour)
	announce(late)
	announce(a) // an announcement delayed on its way: Seen stays
	if got := list()[1].Seen; !got.Equal(late.Seen) {
		t.Errorf("a seen at %v after an older announcement, want %v", got, late.Seen)
	}

	b.Seen = late.Seen.Add(ForgetInstancesAfter + time.Second)
	announce(b)
	if got := list(); len(got) != 1 || got[0].ID != b.ID {
		t.Errorf("a day after a stopped announcing, listed %+v, want b alone", got)
	}
}

// TestACrashLoopListsTheStoppedInstancesSeenLastOnly: an instance that
// restarts every ten seconds is a new one each time; of those stopped,
// only the KeepStoppedInstances seen last stay listed, and every instance
// alive stays, however many stopped after it started.
func TestACrashLoopListsTheStoppedInstancesSeenLastOnly(t *testing.T) {
	t.Parallel()
	s := open(t)
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	announce := func(in Instance) {
		t.Helper()
		if err := s.Announce(t.Context(), in); err != nil {
			t.Fatal(err)
		}
	}
	none := map[string]string{}
	// steady runs throughout, announcing itself every minute.
	steady := Instance{ID: "steady-1-a", Host: "steady", PID: 1, Started: t0, Seen: t0, Settings: none}
	const loops = KeepStoppedInstances + 50
	for i := range loops {
		at := t0.Add(time.Duration(i) * 10 * time.Second)
		if i%6 == 0 {
			steady.Seen = at
			announce(steady)
		}
		announce(Instance{ID: fmt.Sprintf("looping-%d-x", 100+i), Host: "looping", PID: 100 + i, Started: at, Seen: at, Settings: none})
	}
	last := t0.Add(loops * 10 * time.Second)
	steady.Seen = last
	announce(steady)
	other := Instance{ID: "other-2-b", Host: "other", PID: 2, Started: t0, Seen: last, Settings: none}
	announce(other)

	got, err := s.Instances(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range got {
		ids = append(ids, in.ID)
	}
	var want []string
	for i := loops - 1; i >= 0; i-- {
		// Those of the last StoppedAfter are not stopped yet.
		if i < loops-KeepStoppedInstances-int(StoppedAfter/(10*time.Second)) {
			break
		}
		want = append(want, fmt.Sprintf("looping-%d-x", 100+i))
	}
	want = append(want, "other-2-b", "steady-1-a")
	if !slices.Equal(ids, want) {
		t.Errorf("listed %d instances:\n%v\nwant %d:\n%v", len(ids), ids, len(want), want)
	}
}
