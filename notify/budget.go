package notify

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// budget is the rate limits of notifications, shaped as a multi-tenant
// service shapes a shared resource: each tenant (project) has a bucket of
// its own, and the shared bucket is bounded in all.
//
//   - A job may send perJob an hour: a flapping job tells its channel
//     once per transition, not forever.
//   - A project may send perProject a minute, a share of the total: a
//     project failing every job at once takes at most that share, and
//     floods its own channel no more.
//   - All projects may send total a minute, which bounds the server's
//     egress in an incident that fails everything; but a project that has
//     sent nothing in the last minute is never held back by the others'
//     sends. So no number of noisy projects can silence a quiet one, whose
//     first failure is the notice that matters most; in all, at most
//     total plus one per project go out a minute, and the operator grants
//     the projects.
//
// Nothing is taken for a notice refused before it: the destination check
// and the limits come in that order in Notify.
type budget struct {
	perJob, perProject, total int

	mu       sync.Mutex
	jobs     map[string][]time.Time // each job's sends in the last hour
	projects map[string][]time.Time // each project's sends in the last minute
	all      []time.Time            // every send in the last minute
}

func newBudget(perJob, perProject, total int) *budget {
	return &budget{perJob: perJob, perProject: perProject, total: total,
		jobs: map[string][]time.Time{}, projects: map[string][]time.Time{}}
}

// take counts a send of job's at now against the limits, or refuses it
// and counts nothing.
func (b *budget) take(job string, now time.Time) error {
	project, _, _ := strings.Cut(job, "/")
	hourAgo, minuteAgo := now.Add(-time.Hour), now.Add(-time.Minute)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.all = since(b.all, minuteAgo)
	ofJob := since(b.jobs[job], hourAgo)
	ofProject := since(b.projects[project], minuteAgo)
	switch {
	case len(ofJob) >= b.perJob:
		return fmt.Errorf("not sent: rate limited (at most %d notifications an hour per job)", b.perJob)
	case len(ofProject) >= b.perProject:
		return fmt.Errorf("not sent: rate limited (at most %d notifications a minute per project)", b.perProject)
	case len(b.all) >= b.total && len(ofProject) > 0:
		return fmt.Errorf("not sent: rate limited (at most %d notifications a minute in all, and this project sent %d)", b.total, len(ofProject))
	}
	b.jobs[job] = append(ofJob, now)
	b.projects[project] = append(ofProject, now)
	b.all = append(b.all, now)
	// The maps hold only who sent within their window.
	forget(b.jobs, hourAgo)
	forget(b.projects, minuteAgo)
	return nil
}

// forget drops the entries with no send since t.
func forget(m map[string][]time.Time, t time.Time) {
	for k, ts := range m {
		if len(since(ts, t)) == 0 {
			delete(m, k)
		}
	}
}

// since drops the times before t, which are oldest first.
func since(ts []time.Time, t time.Time) []time.Time {
	i := 0
	for i < len(ts) && ts[i].Before(t) {
		i++
	}
	return ts[i:]
}
