package console_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/slo"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// objectivesSite is a server with one project, billing, whose jobs have
// objectives of their own (one has none), run for two days with an hour
// down between them; settle fails one occurrence in four.
func objectivesSite(t *testing.T) *site {
	t.Helper()
	s := newSite(t)
	def := func(sched, kind, spec string, o slo.Objective) engine.Definition {
		return engine.Definition{Schedule: sched, Target: kind, Spec: json.RawMessage(spec), Objective: o}
	}
	r := engine.Revision{ID: "b1", File: "billing.yaml",
		Grants: []access.RoleGrant{{Role: access.Reader, Members: []access.Member{narrow}, Jobs: []string{"heartbeat"}}}}
	for name, d := range map[string]engine.Definition{
		"settle":    def("*/10 * * * *", "flaky", `{"bank":"acme"}`, slo.Objective{Lateness: 30 * time.Second, Success: 0.99}),
		"heartbeat": def("*/5 * * * *", "noop", `{}`, slo.Objective{Lateness: 5 * time.Minute, OnTime: 0.95, Success: 0.95, Window: 28 * 24 * time.Hour}),
		"export":    def("3,13,23,33,43,53 * * * *", "noop", `{"sleep":"20s"}`, slo.Objective{Lateness: 10 * time.Second, OnTime: 0.9}),
		"cleanup":   def("@hourly", "noop", `{}`, slo.Objective{}),
	} {
		r.Jobs = append(r.Jobs, engine.Job{ID: "billing/" + name, Definition: d})
	}
	if err := s.eng.ApplyProject(s.ctx, "billing", r); err != nil {
		t.Fatal(err)
	}
	// A day, then the server is down for an hour: the occurrences of that
	// hour are found too late and count late. Then another day.
	s.runUntil(t, t0.Add(24*time.Hour))
	s.clk.Set(t0.Add(25 * time.Hour))
	s.runUntil(t, t0.Add(48*time.Hour))
	return s
}

// counted is a job's history counted apart from the console: the ended
// invocations and those that succeeded.
func counted(t *testing.T, s *site, jobID string) (succeeded, ended int) {
	t.Helper()
	for pg := (store.Page{Limit: store.MaxLimit}); ; {
		invs, next, err := s.st.Invocations(s.ctx, jobID, pg)
		if err != nil {
			t.Fatal(err)
		}
		for _, inv := range invs {
			switch statemachine.Status(inv.Status) {
			case statemachine.StatusSucceeded:
				succeeded++
				ended++
			case statemachine.StatusFailed:
				ended++
			}
		}
		if next == "" {
			return succeeded, ended
		}
		pg.Cursor = next
	}
}

// The project's objectives page shows each job's objectives, what it
// attained over its window and the error budget left, and the project's
// together; a job without objectives is named apart. The attainment is
// the history's: settle's successes over its ended invocations, counted
// here from the store.
func TestObjectivesPageJudgesEachJobFromItsHistory(t *testing.T) {
	t.Parallel()
	s := objectivesSite(t)
	got := s.get(t, admin, "/projects/billing/objectives")
	if got.status != 200 {
		t.Fatalf("status %d: %s", got.status, got.raw)
	}
	text := got.text()
	good, ended := counted(t, s, "billing/settle")
	if ended == 0 || good == ended {
		t.Fatalf("settle ended %d invocations, %d succeeded: the demo should fail some", ended, good)
	}
	wants(t, "the objectives page", text,
		"billing: objectives", "The project", "heartbeat", "export", "settle",
		fmt.Sprintf("%d good of %d", good, ended), "spent,", "times over",
		"over 28 days", "Without objectives: cleanup")
	if !strings.Contains(text, "On time") || !strings.Contains(text, "Succeeded") {
		t.Errorf("the page names no objective: %s", text)
	}
	if strings.Contains(text, "cleanup On time") {
		t.Errorf("cleanup, which has no objectives, has a row: %s", text)
	}
}

// A job's page shows its objectives; one without them shows none.
func TestJobPageShowsItsObjectives(t *testing.T) {
	t.Parallel()
	s := objectivesSite(t)
	text := s.get(t, admin, "/projects/billing/jobs/heartbeat").text()
	wants(t, "heartbeat's page", text, "Objectives, last 28 days",
		"95% of scheduled launches within 5m of their time; 95% of ended invocations succeed", "from the job's config",
		"100% left", "slo {lateness: 5m, on_time: 95%, success: 95%, window: 28d}")
	if text := s.get(t, admin, "/projects/billing/jobs/cleanup").text(); strings.Contains(text, "Objectives, last") {
		t.Errorf("cleanup's page shows objectives it does not have: %s", text)
	}
}

// The objectives page shows a viewer only the jobs it may read.
func TestObjectivesPageShowsOnlyWhatTheViewerMayRead(t *testing.T) {
	t.Parallel()
	s := objectivesSite(t)
	text := s.get(t, narrow, "/projects/billing/objectives").text()
	wants(t, "the narrow reader's objectives page", text, "heartbeat", "1 of 1 jobs")
	for _, hidden := range []string{"settle", "export", "cleanup"} {
		if strings.Contains(text, hidden) {
			t.Errorf("the narrow reader sees %s: %s", hidden, text)
		}
	}
}
