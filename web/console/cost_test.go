package console_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/web"
	"github.com/sundial-cron/sundial/web/signin"
)

// jobReads counts the projects whose jobs a store's listings read.
type jobReads struct {
	store.Store
	mu       sync.Mutex
	projects map[string]int // "" for a listing of every project's jobs
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
	s := newSite(t)
	s.demo(t)
	roles, err := access.NewRoles(access.Settings{Administrators: []access.Member{admin}})
	if err != nil {
		t.Fatal(err)
	}
	reads := &jobReads{Store: s.st}
	s.handler = web.New(web.Options{
		Engine: s.eng, Store: reads, Authenticators: signin.Chain{testIdentity{}}, Roles: roles,
		Now: s.now, Console: true, SignIn: "/auth/signin",
	})
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
		if p := s.get(t, c.who, "/"); p.status != http.StatusOK {
			t.Fatalf("GET / as %q: %d", c.who, p.status)
		}
		if len(reads.projects) != len(c.want) {
			t.Errorf("GET / as %q read the jobs of %v; want %v", c.who, reads.projects, c.want)
		}
		for project, n := range c.want {
			if reads.projects[project] != n {
				t.Errorf("GET / as %q read the jobs of %v; want %v", c.who, reads.projects, c.want)
			}
		}
	}
}
