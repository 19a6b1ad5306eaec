package postgres

import (
	"testing"

	"github.com/sundial-cron/sundial/internal/pgtest"
	"github.com/sundial-cron/sundial/store"
)

// TestAMemoComesBackUntilAnotherInstanceWritesTheJob: a job's state comes
// back as the memo this instance committed with it, not as bytes to
// decode, for as long as the stored bytes are the ones it committed;
// another instance's write of the job brings the bytes back.
func TestAMemoComesBackUntilAnotherInstanceWritesTheJob(t *testing.T) {
	t.Parallel()
	url := pgtest.Shared(t).Database(t)
	openOn := func() *Store {
		s, err := Open(t.Context(), url, Options{MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := openOn(), openOn()
	put := func(s *Store, state string) *string {
		memo := new(state)
		if _, err := s.Update(t.Context(), "p/j", func(tx store.Tx) error {
			return tx.PutJob(&store.JobRecord{ID: "p/j", Project: "p", State: "SCHEDULED", EncodedState: []byte(state), Memo: memo})
		}); err != nil {
			t.Fatal(err)
		}
		return memo
	}
	read := func(who string, s *Store, wantMemo *string, wantState string) {
		t.Helper()
		var got *store.JobRecord
		if _, err := s.Update(t.Context(), "p/j", func(tx store.Tx) error {
			var err error
			got, err = tx.Job()
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if wantMemo != nil {
			if got.Memo != wantMemo || got.EncodedState != nil {
				t.Errorf("%s reads memo %v and state %q, want its memo %v in place of the state", who, got.Memo, got.EncodedState, wantMemo)
			}
			return
		}
		if got.Memo != nil || string(got.EncodedState) != wantState {
			t.Errorf("%s reads memo %v and state %q, want no memo and %q", who, got.Memo, got.EncodedState, wantState)
		}
	}
	one := put(a, "one")
	read("a, which wrote it", a, one, "")
	read("b, which never did", b, nil, "one")
	two := put(b, "two")
	read("a, after b wrote it", a, nil, "two")
	read("b, which wrote it", b, two, "")
	again := put(a, "one")
	read("a, which wrote it again", a, again, "")
	read("b, after a wrote it back", b, nil, "one")
}
