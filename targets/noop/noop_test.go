package noop_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/noop"
)

func request(spec string) targets.Request {
	req := targets.Request{Key: "p/job/inv-1", JobID: "p/job", Invocation: "inv-1", Attempt: 1}
	if spec != "" {
		req.Spec = json.RawMessage(spec)
	}
	return req
}

// The specs noop accepts, and what each does. Bad specs, ended contexts
// and sleeps cut short are the conformance suite's (conformance_test.go).
func TestLaunch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		spec        string
		want        targets.Status
		wantMessage string
	}{
		{"no spec succeeds", "", targets.Succeeded, "noop: done"},
		{"an empty spec succeeds", `{}`, targets.Succeeded, "noop: done"},
		{"fail: false succeeds", `{"fail": false}`, targets.Succeeded, "noop: done"},
		{"fail: true fails", `{"fail": true}`, targets.Failed, "noop: failing as asked"},
		{"a short sleep then succeeds", `{"sleep": "20ms"}`, targets.Succeeded, "noop: done"},
		{"a short sleep then fails when asked to", `{"sleep": "20ms", "fail": true}`, targets.Failed, "noop: failing as asked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if err := (noop.Target{}).Check(json.RawMessage(tc.spec)); err != nil {
				t.Errorf("Check(%s) = %v; want nil", tc.spec, err)
			}
			res := noop.Target{}.Launch(t.Context(), request(tc.spec))
			if res.Status != tc.want || !strings.Contains(res.Message, tc.wantMessage) {
				t.Errorf("Launch(%s) = %v %q; want %v with %q", tc.spec, res.Status, res.Message, tc.want, tc.wantMessage)
			}
		})
	}
}
