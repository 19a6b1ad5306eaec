package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"

	"github.com/sundial-cron/sundial/config"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/web/signin"
)

// ConfigSource says where the projects' configs come from: a directory,
// one config repo, or a projects list naming each project's repo.
type ConfigSource struct {
	// Dir is the directory of project configs, one <project>.yaml each;
	// "" when they come from repos.
	Dir string
	// Refresh is how often the configs are read again, give or take a
	// tenth.
	Refresh time.Duration

	// Repo is the config repo whose Path/<project>.yaml files are the
	// projects, at Ref.
	Repo, Ref, Path string
	// ProjectsFile lists each project with its own repo, ref and path; with
	// ProjectsRepo, it is a path in that repo, at ProjectsRef ("": main).
	ProjectsFile, ProjectsRepo, ProjectsRef string
	// TokenFile (sent as User), SSHKeyFile and GoogleAuth are the
	// credentials the repos are read with: one at most.
	TokenFile, User string
	SSHKeyFile      string
	GoogleAuth      bool
	// Link is a link to a config file at a commit, naming {commit} and
	// {path}.
	Link string
	// MaxBytes bounds what one read of a repo may take (config.GitOptions
	// says what it covers); FetchTimeout how long one ls-remote and fetch
	// may take.
	MaxBytes     int64
	FetchTimeout time.Duration
	// WebhookSecretFile holds the secret push webhooks sign reimports
	// with.
	WebhookSecretFile string
	// Moved says the configs moved here on purpose: the database, whose
	// projects another source defined, is taken over for this one.
	Moved bool
	// Calendars is a directory of .ics files, or a YAML file of calendars,
	// that every project's jobs may name (config.LoadCalendars); "" for
	// none. It is read, and checked, at start, and read again at every
	// refresh (config.RefresherOptions.CalendarsPath).
	Calendars string
}

// repoResources are what Check reads of a ConfigSource's files.
type repoResources struct {
	webhookSecret []byte
	projects      []config.ProjectEntry
	auth          transport.AuthMethod
	calendars     *config.SharedCalendars
}

// FromRepos reports whether the configs come from repos.
func (c *ConfigSource) FromRepos() bool { return c.Repo != "" || c.ProjectsFile != "" }

// check checks the settings and reads their files into r.
func (c *ConfigSource) check(r *repoResources) error {
	if c.Repo != "" && c.ProjectsFile != "" {
		return errors.New("--config-repo, --projects-file: give one; a --projects-file entry names each project's repo")
	}
	if c.FromRepos() && c.Dir != "" {
		return errors.New("--config-dir: not with --config-repo or --projects-file; the configs come from one place")
	}
	if c.ProjectsRepo == "" && c.ProjectsRef != "" {
		return errors.New("--projects-ref: only with --projects-repo")
	}
	if c.ProjectsRepo != "" && c.ProjectsFile == "" {
		return errors.New("--projects-repo: needs --projects-file, the path of the projects list in the repo")
	}
	if c.Calendars != "" {
		cals, err := config.LoadCalendars(c.Calendars)
		if err != nil {
			return fmt.Errorf("--calendars: %w", err)
		}
		r.calendars = cals
	}
	if !c.FromRepos() {
		return nil
	}
	if c.MaxBytes <= 0 || c.FetchTimeout <= 0 {
		return errors.New("--config-max-bytes and --config-fetch-timeout must be positive")
	}
	if c.TokenFile != "" && c.SSHKeyFile != "" || c.GoogleAuth && (c.TokenFile != "" || c.SSHKeyFile != "") {
		return errors.New("--config-token-file, --config-ssh-key-file, --config-google-auth: give one")
	}
	if c.GoogleAuth {
		ts, err := google.DefaultTokenSource(context.Background(), "https://www.googleapis.com/auth/cloud-platform")
		if err != nil {
			return fmt.Errorf("--config-google-auth: %w", err)
		}
		r.auth = googleAuth{ts}
	}
	if c.TokenFile != "" {
		token, err := signin.ReadTokenFile(c.TokenFile)
		if err != nil {
			return fmt.Errorf("--config-token-file: %w", err)
		}
		r.auth = &githttp.BasicAuth{Username: c.User, Password: token}
	}
	if c.SSHKeyFile != "" {
		auth, err := gitssh.NewPublicKeysFromFile("git", c.SSHKeyFile, "")
		if err != nil {
			return fmt.Errorf("--config-ssh-key-file: %w", err)
		}
		r.auth = auth
	}
	if c.WebhookSecretFile != "" {
		secret, err := signin.ReadTokenFile(c.WebhookSecretFile)
		if err != nil {
			return fmt.Errorf("--config-webhook-secret-file: %w", err)
		}
		r.webhookSecret = []byte(secret)
	}
	if c.ProjectsRepo != "" {
		_, err := c.list(r)
		return err
	}
	if c.ProjectsFile != "" {
		var err error
		if r.projects, err = config.ReadProjectsFile(c.ProjectsFile); err != nil {
			return fmt.Errorf("--projects-file: %w", err)
		}
	}
	_, err := c.sources(r)
	return err
}

// refresher is the refresher of what the settings name: Dir when no repo is,
// and the list in --projects-repo, read again at every pass, when that is
// given.
func (c *ConfigSource) refresher(r *repoResources, eng *engine.Engine, st store.Store, opts config.RefresherOptions) (*config.Refresher, error) {
	opts.Calendars, opts.CalendarsPath = r.calendars, c.Calendars
	if c.ProjectsRepo != "" {
		list, err := c.list(r)
		if err != nil {
			return nil, err
		}
		return config.NewListRefresher(list, eng, st, opts), nil
	}
	sources, err := c.sources(r)
	if err != nil {
		return nil, err
	}
	return config.NewSourceRefresher(sources, eng, st, opts), nil
}

// list is the projects list in --projects-repo; it is read with the
// config repos' credentials and bounds.
func (c *ConfigSource) list(r *repoResources) (*config.ProjectList, error) {
	each := config.GitOptions{Ref: c.Ref, Auth: r.auth, MaxBytes: c.MaxBytes, Timeout: c.FetchTimeout, Link: c.Link}
	in := each
	in.URL, in.Ref, in.File, in.Link = c.ProjectsRepo, cmp.Or(c.ProjectsRef, "main"), c.ProjectsFile, ""
	l, err := config.NewProjectList(in, each)
	if err != nil {
		return nil, fmt.Errorf("--projects-repo, --projects-file: %w", err)
	}
	return l, nil
}

// sources are the config sources the settings name: Dir when no repo is.
func (c *ConfigSource) sources(r *repoResources) ([]config.Source, error) {
	if !c.FromRepos() {
		return []config.Source{config.DirSource(c.Dir)}, nil
	}
	opts := config.GitOptions{URL: c.Repo, Ref: c.Ref, Path: strings.TrimSuffix(c.Path, "/"), Auth: r.auth, MaxBytes: c.MaxBytes, Timeout: c.FetchTimeout, Link: c.Link}
	if c.Repo != "" {
		s, err := config.NewGitSource(opts)
		if err != nil {
			return nil, fmt.Errorf("--config-repo: %w", err)
		}
		return []config.Source{s}, nil
	}
	var out []config.Source
	for _, p := range r.projects {
		o := opts
		o.URL, o.Path, o.Projects = p.Repo, strings.TrimSuffix(p.Path, "/"), []string{p.ID}
		if p.Ref != "" {
			o.Ref = p.Ref
		}
		s, err := config.NewGitSource(o)
		if err != nil {
			return nil, fmt.Errorf("--projects-file: project %s: %w", p.ID, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// googleAuth reads a config repo with the server's Google credentials: an
// OAuth access token, fresh when the last expires, as the basic-auth
// password, which Cloud Source Repositories takes.
type googleAuth struct{ ts oauth2.TokenSource }

func (googleAuth) Name() string   { return "google" }
func (googleAuth) String() string { return "google: the server's credentials" }

// SetAuth sets the token; without one the request goes out bare, and the
// repo's refusal is the error the refresh reports.
func (a googleAuth) SetAuth(r *http.Request) {
	tok, err := a.ts.Token()
	if err != nil {
		return
	}
	r.SetBasicAuth("oauth2accesstoken", tok.AccessToken)
}

// logAttrs say where the configs come from, in the "listening" line.
func (c *ConfigSource) logAttrs() []any {
	switch {
	case c.ProjectsRepo != "":
		return []any{"projects_repo", c.ProjectsRepo, "projects_file", c.ProjectsFile}
	case c.ProjectsFile != "":
		return []any{"projects_file", c.ProjectsFile}
	case c.Repo != "":
		return []any{"config_repo", c.Repo, "config_ref", c.Ref, "config_path", c.Path}
	}
	return []any{"config_dir", c.Dir}
}

// identity names where the configs come from, as a database records it
// (engine.ClaimConfigSource): the directory's absolute path, or the
// repos' URLs (without credentials), refs and paths. Servers sharing a
// database must read the same source.
func (c *ConfigSource) identity() (string, error) {
	switch {
	case c.ProjectsRepo != "":
		return fmt.Sprintf("projects list %s in %s at %s", c.ProjectsFile, redactURL(c.ProjectsRepo), cmp.Or(c.ProjectsRef, "main")), nil
	case c.ProjectsFile != "":
		abs, err := absPath(c.ProjectsFile)
		return "projects list " + abs, err
	case c.Repo != "":
		return fmt.Sprintf("config repo %s at %s, %s", redactURL(c.Repo), c.Ref, strings.TrimSuffix(c.Path, "/")), nil
	}
	abs, err := absPath(c.Dir)
	return "config directory " + abs, err
}

// absPath is path absolute, its links followed where it exists.
func absPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	return abs, nil
}

// redactURL is a repo URL without the user information it may carry.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}
