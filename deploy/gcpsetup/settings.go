// Package gcpsetup creates or updates what Sundial needs on Cloud Run
// besides the service itself: the Cloud Tasks queue its tasks go through,
// and the Cloud Scheduler jobs that call its once-a-minute passes. The
// desired state is a pure function of Settings; Apply compares it with
// what exists, writes only the fields that differ, and never deletes.
package gcpsetup

import (
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"regexp"
	"strings"
)

// Settings say where Sundial runs and how Cloud Tasks and Cloud Scheduler
// reach it: the values `serve --backend=cloud` reads on Cloud Run.
type Settings struct {
	Project   string // the Google Cloud project
	Location  string // the region of the queue and of the scheduler jobs
	Queue     string // the queue's short name
	PublicURL string // the service's base URL, https
	Invoker   string // the service account Cloud Scheduler signs its tokens as
	Passes    []Pass // the once-a-minute passes, a scheduler job each
}

// Pass is one once-a-minute pass: the Cloud Scheduler job that calls it
// and the path the service serves it at.
type Pass struct {
	Job  string // the job's short name
	Path string // absolute, as in /internal/cron/watchdog
}

var (
	// A project id, possibly domain-scoped (example.com:project).
	projectID = regexp.MustCompile(`^([a-z0-9.-]+:)?[a-z][a-z0-9-]{4,28}[a-z0-9]$`)
	region    = regexp.MustCompile(`^[a-z]+(-[a-z]+)+[0-9]+$`)
	queueID   = regexp.MustCompile(`^[A-Za-z0-9-]{1,100}$`)
	jobID     = regexp.MustCompile(`^[A-Za-z0-9_-]{1,500}$`)
)

// Validate reports every setting that is missing or malformed, in one
// error naming each.
func (s Settings) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch {
	case s.Project == "":
		bad("Google Cloud project: missing")
	case !projectID.MatchString(s.Project):
		bad("Google Cloud project %q: want a project id (6 to 30 lowercase letters, digits and hyphens, starting with a letter)", s.Project)
	}
	switch {
	case s.Location == "":
		bad("location: missing")
	case !region.MatchString(s.Location):
		bad("location %q: want a region like us-central1 (App Engine names some regions without the trailing digit; Cloud Tasks does not)", s.Location)
	}
	if !queueID.MatchString(s.Queue) {
		bad("queue %q: want 1 to 100 letters, digits and hyphens", s.Queue)
	}
	if s.PublicURL == "" {
		bad("public URL: missing")
	} else if err := checkPublicURL(s.PublicURL); err != nil {
		bad("public URL %q: %v", s.PublicURL, err)
	}
	if s.Invoker == "" {
		bad("invoker: missing")
	} else if a, err := mail.ParseAddress(s.Invoker); err != nil || a.Address != s.Invoker {
		bad("invoker %q: want a service account's email address", s.Invoker)
	}
	if len(s.Passes) == 0 {
		bad("passes: none")
	}
	seen := map[string]bool{}
	for _, p := range s.Passes {
		if !jobID.MatchString(p.Job) {
			bad("pass job %q: want 1 to 500 letters, digits, hyphens and underscores", p.Job)
		}
		if seen[p.Job] {
			bad("pass job %q: named twice", p.Job)
		}
		seen[p.Job] = true
		if !strings.HasPrefix(p.Path, "/") {
			bad("pass %s path %q: want an absolute path", p.Job, p.Path)
		}
	}
	return errors.Join(errs...)
}

// checkPublicURL accepts a service's base URL. It must be https: Cloud
// Scheduler and Cloud Tasks send OIDC tokens only over https, and the
// token's audience is this URL plus the endpoint's path, so it can carry
// neither a path of its own nor a query.
func checkPublicURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return err
	case u.Scheme != "https":
		return errors.New("want https://HOST, the service's URL")
	case u.Host == "" || u.User != nil:
		return errors.New("want https://HOST with a host and no user")
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "":
		return errors.New("want the service's base URL, without a path, query or fragment")
	}
	return nil
}

// QueueName is the queue's full resource name.
func (s Settings) QueueName() string { return s.locationName() + "/queues/" + s.Queue }

// JobName is the full resource name of the scheduler job with the short
// name id.
func (s Settings) JobName(id string) string { return s.locationName() + "/jobs/" + id }

func (s Settings) locationName() string {
	return fmt.Sprintf("projects/%s/locations/%s", s.Project, s.Location)
}
