package console_test

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/web"
	"github.com/sundial-cron/sundial/web/signin"
)

// jobReads counts the projects whose jobs a store's listings read, and
// the invocations its Recent reads.
type jobReads struct {
	store.Store
	mu       sync.Mutex
	projects map[string]int // "" for a listing of every project's jobs
	recent   []recentCall
}

// recentCall is one Store.Recent: the jobs named and how many of each.
type recentCall struct {
	jobs []string
	n    int
}

func (s *jobReads) Recent(ctx context.Context, jobIDs []string, n int) (map[string][]*store.InvocationRecord, error) {
	s.mu.Lock()
	if len(jobIDs) > 0 {
		s.recent = append(s.recent, recentCall{jobs: slices.Clone(jobIDs), n: n})
	}
	s.mu.Unlock()
	return s.Store.Recent(ctx, jobIDs, n)
}

func (s *jobReads) Jobs(ctx context.Context, project string, p store.Page) ([]*store.JobRecord, string, error) {
	s.mu.Lock()
	s.projects[project]++
	s.mu.Unlock()
	return s.Store.Jobs(ctx, project, p)
}

// The projects page reads the jobs of the projects its viewer sees, and no
// others: an anonymous caller or an outsider, who sees none, costs no job
// read, and a reader of one project reads that project's alone. Before,
// every GET / read every job in the store: at 100,000 jobs 0.8 s of CPU
// an anonymous request, and 32 anonymous clients slowed an
// administrator's call from 5 ms to over a second.
func TestTheProjectsPageReadsOnlyWhatItsViewerSees(t *testing.T) {
	s, reads := countedSite(t)
	for _, path := range []string{"/", "/fleet"} {
		for _, c := range []struct {
			who  string
			want map[string]int
		}{
			{"", map[string]int{}},
			{outsider, map[string]int{}},
			{reader, map[string]int{"payments": 1}},
			{admin, map[string]int{"": 1}},
		} {
			reads.projects = map[string]int{}
			if p := s.get(t, c.who, path); p.status != http.StatusOK {
				t.Fatalf("GET %s as %q: %d", path, c.who, p.status)
			}
			if len(reads.projects) != len(c.want) {
				t.Errorf("GET %s as %q read the jobs of %v; want %v", path, c.who, reads.projects, c.want)
			}
			for project, n := range c.want {
				if reads.projects[project] != n {
					t.Errorf("GET %s as %q read the jobs of %v; want %v", path, c.who, reads.projects, c.want)
				}
			}
		}
	}
}

// countedSite is the demo over a store that counts its reads.
func countedSite(t *testing.T) (*site, *jobReads) {
	t.Helper()
	s := newSite(t)
	s.demo(t)
	roles, err := access.NewRoles(access.Settings{Administrators: []access.Member{admin}})
	if err != nil {
		t.Fatal(err)
	}
	reads := &jobReads{Store: s.st, projects: map[string]int{}}
	s.handler = web.New(web.Options{
		Engine: s.eng, Store: reads, Authenticators: signin.Chain{testIdentity{}}, Roles: roles,
		Now: s.now, Console: true, SignIn: "/auth/signin",
	})
	return s, reads
}

// The fleet reads invocations only of the jobs that ended one in the
// last 24 hours, at most store.MaxRecentJobs of them, 25 each, in one
// Store.Recent: never a job's whole history, and nothing of a job that
// has not run. The grid reads its page of jobs' newest 100, in one.
func TestFleetAndGridReadBoundedHistory(t *testing.T) {
	s, reads := countedSite(t)
	for _, c := range []struct {
		who, path   string
		n, most     int
		never, must []string
	}{
		{admin, "/fleet", 25, store.MaxRecentJobs, []string{"payments/watch-deploys", "demo/on-demand"}, []string{"demo/always-fails", "payments/settle"}},
		{reader, "/fleet", 25, store.MaxRecentJobs, []string{"demo/always-fails", "payments/watch-deploys"}, []string{"payments/settle"}},
		{admin, "/projects/payments/grid", 100, 50, []string{"demo/always-fails"}, []string{"payments/settle"}},
	} {
		reads.recent = nil
		if p := s.get(t, c.who, c.path); p.status != http.StatusOK {
			t.Fatalf("GET %s as %s: %d", c.path, c.who, p.status)
		}
		if len(reads.recent) != 1 {
			t.Fatalf("GET %s as %s made %d reads of recent invocations, want 1", c.path, c.who, len(reads.recent))
		}
		call := reads.recent[0]
		if call.n != c.n || len(call.jobs) > c.most {
			t.Errorf("GET %s as %s read %d invocations of %d jobs; want %d of at most %d", c.path, c.who, call.n, len(call.jobs), c.n, c.most)
		}
		for _, id := range c.never {
			if slices.Contains(call.jobs, id) {
				t.Errorf("GET %s as %s read the invocations of %s", c.path, c.who, id)
			}
		}
		for _, id := range c.must {
			if !slices.Contains(call.jobs, id) {
				t.Errorf("GET %s as %s did not read the invocations of %s", c.path, c.who, id)
			}
		}
	}
}
