package jobid_test

import (
	"testing"

	"github.com/sundial-cron/sundial/jobid"
)

func TestParseReadsWhatStringPrints(t *testing.T) {
	id := jobid.ID{Project: "billing", Job: "nightly-report"}
	got, err := jobid.Parse(id.String())
	if err != nil || got != id {
		t.Errorf("Parse(%q) = %+v, %v; want %+v", id.String(), got, err, id)
	}
	if s := jobid.Join("billing", "nightly-report"); s != "billing/nightly-report" {
		t.Errorf("Join = %q", s)
	}
}

func TestParseRefusesAnIdWithoutBothParts(t *testing.T) {
	for _, s := range []string{"", "billing", "billing/", "/nightly", "billing/a/b", "/"} {
		if id, err := jobid.Parse(s); err == nil {
			t.Errorf("Parse(%q) = %+v; want an error", s, id)
		}
	}
}

// Split never fails: what it is given was checked when the job was made.
func TestSplitTakesTheProjectBeforeTheFirstSlash(t *testing.T) {
	for s, want := range map[string]jobid.ID{
		"billing/nightly": {Project: "billing", Job: "nightly"},
		"billing":         {Project: "billing"},
		"billing/a/b":     {Project: "billing", Job: "a/b"},
	} {
		if got := jobid.Split(s); got != want {
			t.Errorf("Split(%q) = %+v; want %+v", s, got, want)
		}
	}
}
