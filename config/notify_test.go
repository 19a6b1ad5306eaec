package config_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
)

// TestParseReadsNotify: the webhook, its format and the transitions,
// both transitions when on is left out, and one definition whatever order
// on is written in.
func TestParseReadsNotify(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, yaml string
		want       *engine.Notify
	}{
		{"none", "", nil},
		{"every transition by default", "    notify: {webhook: \"https://hooks.slack.com/services/T/B/X\", format: slack}\n",
			&engine.Notify{URL: "https://hooks.slack.com/services/T/B/X", Format: "slack", On: []string{"failure", "recovery"}}},
		{"generic is the default format", "    notify: {webhook: \"https://h.example.com/x\", format: generic, on: [recovery]}\n",
			&engine.Notify{URL: "https://h.example.com/x", On: []string{"recovery"}}},
		{"a long run alone", "    notify:\n      webhook: https://h.example.com/x\n      on: []\n      long_run: 45m\n",
			&engine.Notify{URL: "https://h.example.com/x", LongRun: 45 * time.Minute}},
		{"the order of on does not matter", "    notify: {webhook: \"https://h.example.com/x\", format: google_chat, on: [recovery, failure]}\n",
			&engine.Notify{URL: "https://h.example.com/x", Format: "google_chat", On: []string{"failure", "recovery"}}},
	} {
		_, p, err := parseFile(t, "billing.yaml", job+tc.yaml, allTargets())
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := p.Jobs[0].Definition.Notify; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: notify %+v; want %+v", tc.name, got, tc.want)
		}
	}
}
