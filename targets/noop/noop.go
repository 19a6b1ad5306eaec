// Package noop is the target that does nothing: for heartbeat jobs, for
// trying Sundial out, and for measuring the engine without a target's cost.
package noop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sundial-cron/sundial/targets"
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

// Check refuses a spec that Launch could not run: an unknown field, a
// wrong type or a bad sleep.
func (Target) Check(raw json.RawMessage) error {
	_, err := parseSpec(raw)
	return err
}

func parseSpec(raw json.RawMessage) (Spec, error) {
	var spec Spec
	if len(raw) == 0 {
		return spec, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return spec, fmt.Errorf("noop: bad spec: %v", err)
	}
	if dec.More() {
		return spec, fmt.Errorf("noop: bad spec: more than one JSON value")
	}
	if spec.Sleep != "" {
		if d, err := time.ParseDuration(spec.Sleep); err != nil || d < 0 {
			return spec, fmt.Errorf("noop: bad sleep %q: want a duration such as 2s", spec.Sleep)
		}
	}
	return spec, nil
}

// RunsWithinCall says that an attempt ends when Launch returns
// (targets.Synchronous).
func (Target) RunsWithinCall() {}

// Launch waits for Spec.Sleep (or the attempt's deadline) and succeeds,
// unless Spec.Fail. An attempt whose context has ended before it begins
// fails, as every target's does, so a timed-out or aborted attempt never
// counts as a success.
func (Target) Launch(ctx context.Context, req targets.Request) targets.Result {
	spec, err := parseSpec(req.Spec)
	if err != nil {
		return targets.Result{Status: targets.Failed, Message: err.Error()}
	}
	if err := context.Cause(ctx); err != nil {
		return targets.Result{Status: targets.Failed, Message: "noop: not started: " + err.Error()}
	}
	if spec.Sleep != "" {
		d, _ := time.ParseDuration(spec.Sleep) // parseSpec checked it
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return targets.Result{Status: targets.Failed, Message: "noop: " + context.Cause(ctx).Error()}
		}
	}
	if spec.Fail {
		return targets.Result{Status: targets.Failed, Message: "noop: failing as asked"}
	}
	return targets.Result{Status: targets.Succeeded, Message: "noop: done"}
}
