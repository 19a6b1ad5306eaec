package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sundial-cron/sundial/client"
)

// cliProject is a project as GET /api/v1/projects gives it, as far as
// "sundial config status" prints it.
type cliProject struct {
	Project string
	Total   int
	Config  *struct {
		Revision string
		LoadedAt *time.Time `json:"loaded_at"`
		Commit   *struct {
			SHA, Author, Subject, Link string
		}
		Error       string
		ErrorAt     *time.Time `json:"error_at"`
		ErrorCommit string     `json:"error_commit"`
	}
}

// printConfigStatus prints each project's running revision, one a line, and
// under a project whose newest revision is refused, its error and the
// refused commit; raw prints the API's JSON instead.
func printConfigStatus(ctx context.Context, c *client.Client, raw bool, stdout io.Writer) error {
	var answer json.RawMessage
	if err := c.Do(ctx, "GET", "/api/v1/projects", nil, &answer); err != nil {
		return err
	}
	var v struct{ Projects []cliProject }
	if err := json.Unmarshal(answer, &v); err != nil {
		return err
	}
	if raw {
		if _, err := fmt.Fprintf(stdout, "%s\n", answer); err != nil {
			return err
		}
		return refusedRevisions(v.Projects)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROJECT\tJOBS\tREVISION\tLOADED AT\tAUTHOR\tSUBJECT")
	var refused []cliProject
	for _, p := range v.Projects {
		rev, loaded, author, subject := "-", "-", "-", "-"
		if cf := p.Config; cf != nil {
			if cf.Revision != "" {
				rev = short(cf.Revision)
			}
			if cf.LoadedAt != nil {
				loaded = cf.LoadedAt.UTC().Format(time.RFC3339)
			}
			if cf.Commit != nil {
				author, subject = cf.Commit.Author, cf.Commit.Subject
			}
			if cf.Error != "" {
				refused = append(refused, p)
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", p.Project, p.Total, rev, loaded, author, subject)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Errors are long (file:line: field: what was expected, and the
	// commit): each gets lines of its own rather than a column.
	for _, p := range refused {
		cf, at := p.Config, ""
		if cf.ErrorAt != nil {
			at = " at " + cf.ErrorAt.UTC().Format(time.RFC3339)
		}
		refusedCommit := ""
		if cf.ErrorCommit != "" {
			refusedCommit = " commit " + short(cf.ErrorCommit)
		}
		fmt.Fprintf(stdout, "\n%s: newest revision%s refused%s; %s keeps running:\n  %s\n", p.Project, refusedCommit, at, orNone(cf.Revision), cf.Error)
	}
	return refusedRevisions(v.Projects)
}

// refusedRevisions is the error of a config status in which a project's
// newest revision is refused, so that scripts see it in the exit status.
func refusedRevisions(projects []cliProject) error {
	var refused []string
	for _, p := range projects {
		if p.Config != nil && p.Config.Error != "" {
			refused = append(refused, p.Project)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	noun := "projects"
	if len(refused) == 1 {
		noun = "project"
	}
	return fmt.Errorf("the newest revision of %d %s is refused: %s", len(refused), noun, strings.Join(refused, ", "))
}

// short is a revision as people quote it: a commit's (or hash's) first 12
// characters.
func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

func orNone(rev string) string {
	if rev == "" {
		return "no revision"
	}
	return "revision " + short(rev)
}
