package urlfetch_test

import (
	"encoding/json"
	"testing"

	"github.com/sundial-cron/sundial/targets/urlfetch"
)

// The specs Check accepts. The specs it refuses, and Launch's refusing
// them alike, are the conformance suite's BadSpecs (conformance_test.go).
func TestCheckAccepts(t *testing.T) {
	t.Parallel()
	tgt := newTarget(t, urlfetch.Options{})
	for _, tc := range []struct {
		name string
		spec string
	}{
		{"a bare https URL", `{"url": "https://example.com/report"}`},
		{"every field", `{"url": "http://example.com:8080/x?y=1", "method": "POST", "headers": {"Content-Type": "application/json"}, "body": "{}", "success_codes": [200, 202]}`},
		{"an extension method", `{"url": "https://example.com", "method": "PURGE"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if err := tgt.Check(json.RawMessage(tc.spec)); err != nil {
				t.Errorf("Check(%s) = %v; want nil", tc.spec, err)
			}
		})
	}
}
