// Package noop is the target that does nothing: for heartbeat jobs, for
// trying Sundial out, and for measuring the engine without a target's cost.
package noop

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sundial-cron/sundial/target"
)

// Spec is the noop target's part of a job definition.
type Spec struct {
	// Sleep is how long each attempt takes, e.g. "2s"; "" returns at once.
	Sleep string `json:"sleep,omitempty"`
	// Fail makes every attempt fail.
	Fail bool `json:"fail,omitempty"`
}

// Target is the noop target. The zero value is ready to use.
type Target struct{}

// Launch waits for Spec.Sleep (or the attempt's deadline) and succeeds,
// unless Spec.Fail.
func (Target) Launch(ctx context.Context, req target.Request) target.Result {
	var spec Spec
	if len(req.Spec) > 0 {
		if err := json.Unmarshal(req.Spec, &spec); err != nil {
			return target.Result{Status: target.Failed, Message: fmt.Sprintf("noop: bad spec: %v", err)}
		}
	}
	if spec.Sleep != "" {
		d, err := time.ParseDuration(spec.Sleep)
		if err != nil {
			return target.Result{Status: target.Failed, Message: fmt.Sprintf("noop: bad sleep %q", spec.Sleep)}
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return target.Result{Status: target.Failed, Message: "noop: " + context.Cause(ctx).Error()}
		}
	}
	if spec.Fail {
		return target.Result{Status: target.Failed, Message: "noop: failing as asked"}
	}
	return target.Result{Status: target.Succeeded, Message: "noop: done"}
}
