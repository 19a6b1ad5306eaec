package server

import (
	"context"
	"errors"
	"testing"

	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/noop"
)

// closer is a target that holds a connection.
type closer struct {
	closed *int
	err    error
}

func (closer) Launch(context.Context, targets.Request) targets.Result { return targets.Result{} }
func (c closer) Close() error                                         { *c.closed++; return c.err }

// The server closes every target that holds a connection when it stops,
// and says if one could not be closed.
func TestCloseTargetsClosesWhatHoldsConnections(t *testing.T) {
	var a, b int
	broken := errors.New("broken pipe")
	err := closeTargets(map[string]targets.Target{
		"noop": noop.Target{}, "a": closer{closed: &a}, "b": closer{closed: &b, err: broken},
	})
	if a != 1 || b != 1 || !errors.Is(err, broken) {
		t.Errorf("closed %d and %d times, error %v; want each once and the broken one's error", a, b, err)
	}
}
