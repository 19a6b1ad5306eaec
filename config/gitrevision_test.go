package config_test

import (
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/config"
)

func TestReadRevisionReadsTheFilesOfEachRevisionOfALocalRepo(t *testing.T) {
	r := newGitRepo(t)
	first := r.commit("two projects", map[string]string{"projects/search.yaml": noopJob("0 3 * * *"), "projects/payments.yaml": noopJob("@daily"),
		"projects/holidays.ics": "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n", "README.md": "not a project"})
	r.commit("search runs at four", map[string]string{"projects/search.yaml": noopJob("0 4 * * *"), "projects/payments.yaml": ""})
	for _, c := range []struct {
		rev      string
		projects []string
		schedule string
	}{
		{rev: first, projects: []string{"payments", "search"}, schedule: "0 3 * * *"},
		{rev: "HEAD~1", projects: []string{"payments", "search"}, schedule: "0 3 * * *"},
		{rev: "main", projects: []string{"search"}, schedule: "0 4 * * *"},
	} {
		s, err := config.ReadRevision(r.dir+"/projects", c.rev, "projects/")
		if err != nil {
			t.Fatalf("%s: %v", c.rev, err)
		}
		var projects []string
		for _, f := range s.Files {
			projects = append(projects, f.Project)
			if f.Err != nil || f.ICS["holidays.ics"].Data == nil {
				t.Errorf("%s: %s: err %v, .ics beside it %v", c.rev, f.Path, f.Err, f.ICS)
			}
			if f.Project == "search" && !strings.Contains(string(f.Data), c.schedule) {
				t.Errorf("%s: search.yaml is %q, want the schedule %q", c.rev, f.Data, c.schedule)
			}
		}
		if strings.Join(projects, " ") != strings.Join(c.projects, " ") || s.Commit == nil {
			t.Errorf("%s: projects %v, commit %v; want %v", c.rev, projects, s.Commit, c.projects)
		}
	}
	for _, c := range []struct{ dir, rev, path, want string }{
		{dir: r.dir, rev: "no-such-branch", want: `revision "no-such-branch"`},
		{dir: t.TempDir(), rev: "main", want: "repository does not exist"},
		{dir: r.dir, rev: "main", path: "../elsewhere", want: "inside the repo"},
	} {
		if _, err := config.ReadRevision(c.dir, c.rev, c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadRevision(%s, %s, %q): %v; want an error saying %q", c.dir, c.rev, c.path, err, c.want)
		}
	}
}
