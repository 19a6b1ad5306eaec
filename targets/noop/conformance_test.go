package noop_test

import (
	"encoding/json"
	"testing"

	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/noop"
	"github.com/sundial-cron/sundial/targets/targettest"
)

func spec(s string) func(*testing.T) json.RawMessage {
	return func(*testing.T) json.RawMessage { return json.RawMessage(s) }
}

func TestConformance(t *testing.T) {
	t.Parallel()
	targettest.Run(t, targettest.Harness{
		New:        func(*testing.T) targets.Target { return noop.Target{} },
		Succeeding: spec(`{}`),
		Launched:   targets.Succeeded,
		Failing:    spec(`{"fail": true}`),
		// A sleep far longer than any test run: only the context ends it.
		// There is no far side to say it began; the suite ends the
		// context at once.
		Hang: func(*testing.T) (json.RawMessage, <-chan struct{}) {
			return json.RawMessage(`{"sleep": "1h"}`), nil
		},
		// No far side, no key carried; no log kept.
		Witness:  nil,
		LogLimit: 0,
		BadSpecs: []targettest.BadSpec{
			{Spec: `{"sleep": 5}`, Field: "Spec.sleep"},
			{Spec: `{"fail": "yes"}`, Field: "Spec.fail"},
			{Spec: `{"sleep": "soon"}`, Field: `bad sleep "soon"`},
			{Spec: `{"sleep": "20"}`, Field: `bad sleep "20"`},
			{Spec: `{"sleep": "-1s"}`, Field: `bad sleep "-1s"`},
			{Spec: `{"slep": "1s"}`, Field: `unknown field "slep"`},
		},
		// noop's messages quote nothing a spec says but a bad sleep, which
		// Check refuses and %q quotes.
		LineBreaks: nil,
	})
}
