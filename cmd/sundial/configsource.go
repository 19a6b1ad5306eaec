package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
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

// repoFlags say where the projects' configs come from when not from
// --config-dir: one config repo, or a service config listing each
// project's repo.
type repoFlags struct {
	repo, ref, path   string
	projectsFile      string
	projectsRepo      string // when set, projectsFile is a path in it
	projectsRef       string
	tokenFile, user   string
	sshKeyFile        string
	googleAuth        bool
	link              string
	maxBytes          int64
	timeout           time.Duration
	webhookSecretFile string
	webhookSecret     []byte // read from webhookSecretFile at start
	projects          []config.ProjectEntry
	auth              transport.AuthMethod
}

func (f *repoFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.repo, "config-repo", os.Getenv("SUNDIAL_CONFIG_REPO"), "the config repo (https://, ssh:// or file:// URL) whose <config-path>/<project>.yaml files are the projects; replaces --config-dir (default $SUNDIAL_CONFIG_REPO)")
	fs.StringVar(&f.ref, "config-ref", envOr("SUNDIAL_CONFIG_REF", "main"), "the branch (or refs/tags/...) of --config-repo and of --projects-file entries without a ref (default $SUNDIAL_CONFIG_REF, else main)")
	fs.StringVar(&f.path, "config-path", envOr("SUNDIAL_CONFIG_PATH", "projects/"), "the directory in --config-repo holding <project>.yaml files (default $SUNDIAL_CONFIG_PATH, else projects/)")
	fs.BoolVar(&f.googleAuth, "config-google-auth", os.Getenv("SUNDIAL_CONFIG_GOOGLE_AUTH") == "true", "read the config repos with the server's Google credentials (Cloud Source Repositories, or Secure Source Manager over https); default $SUNDIAL_CONFIG_GOOGLE_AUTH=true")
	fs.StringVar(&f.projectsFile, "projects-file", "", "a service config listing each project with its own repo, ref and path (docs/config.md); replaces --config-dir and --config-repo; with --projects-repo, its path in that repo")
	fs.StringVar(&f.projectsRepo, "projects-repo", "", "the repo (https://, ssh:// or file:// URL) holding --projects-file, read again at every refresh")
	fs.StringVar(&f.projectsRef, "projects-ref", "main", "the branch (or refs/tags/...) of --projects-repo")
	fs.StringVar(&f.tokenFile, "config-token-file", "", "a file holding the token (or password) that reads the config repos over https")
	fs.StringVar(&f.user, "config-user", "git", "the user name sent with --config-token-file")
	fs.StringVar(&f.sshKeyFile, "config-ssh-key-file", "", "a file holding the private key that reads the config repos over ssh (host keys from ~/.ssh/known_hosts)")
	fs.StringVar(&f.link, "config-link", os.Getenv("SUNDIAL_CONFIG_LINK"), "(default $SUNDIAL_CONFIG_LINK) a link to a config file at a commit, naming {commit} and {path}, e.g. https://github.com/ORG/REPO/blob/{commit}/{path}")
	fs.Int64Var(&f.maxBytes, "config-max-bytes", config.DefaultMaxRepoBytes, "the most one fetch of a config repo may bring; a larger repo is refused")
	fs.DurationVar(&f.timeout, "config-fetch-timeout", time.Minute, "how long one ls-remote and fetch of a config repo may take")
	fs.StringVar(&f.webhookSecretFile, "config-webhook-secret-file", "", "a file holding the secret push webhooks sign POST /api/v1/configs:reimport with (GitHub's X-Hub-Signature-256, GitLab's X-Gitlab-Token)")
}

// enabled reports whether the configs come from repos.
func (f *repoFlags) enabled() bool { return f.repo != "" || f.projectsFile != "" }

// resolve checks the flags and reads their files; set is the flags given.
func (f *repoFlags) resolve(set map[string]bool) error {
	if f.repo != "" && f.projectsFile != "" {
		return errors.New("--config-repo, --projects-file: give one; a --projects-file entry names each project's repo")
	}
	if f.enabled() && set["config-dir"] {
		return errors.New("--config-dir: not with --config-repo or --projects-file; the configs come from one place")
	}
	if f.projectsRepo == "" && set["projects-ref"] {
		return errors.New("--projects-ref: only with --projects-repo")
	}
	if f.projectsRepo != "" && f.projectsFile == "" {
		return errors.New("--projects-repo: needs --projects-file, the path of the projects list in the repo")
	}
	if !f.enabled() {
		for _, name := range []string{"config-ref", "config-path", "config-token-file", "config-ssh-key-file", "config-google-auth", "config-link", "config-webhook-secret-file"} {
			if set[name] {
				return fmt.Errorf("--%s: only with --config-repo or --projects-file", name)
			}
		}
		return nil
	}
	if f.maxBytes <= 0 || f.timeout <= 0 {
		return errors.New("--config-max-bytes and --config-fetch-timeout must be positive")
	}
	if f.tokenFile != "" && f.sshKeyFile != "" || f.googleAuth && (f.tokenFile != "" || f.sshKeyFile != "") {
		return errors.New("--config-token-file, --config-ssh-key-file, --config-google-auth: give one")
	}
	if f.googleAuth {
		ts, err := google.DefaultTokenSource(context.Background(), "https://www.googleapis.com/auth/cloud-platform")
		if err != nil {
			return fmt.Errorf("--config-google-auth: %w", err)
		}
		f.auth = googleAuth{ts}
	}
	if f.tokenFile != "" {
		token, err := signin.ReadTokenFile(f.tokenFile)
		if err != nil {
			return fmt.Errorf("--config-token-file: %w", err)
		}
		f.auth = &githttp.BasicAuth{Username: f.user, Password: token}
	}
	if f.sshKeyFile != "" {
		auth, err := gitssh.NewPublicKeysFromFile("git", f.sshKeyFile, "")
		if err != nil {
			return fmt.Errorf("--config-ssh-key-file: %w", err)
		}
		f.auth = auth
	}
	if f.webhookSecretFile != "" {
		secret, err := signin.ReadTokenFile(f.webhookSecretFile)
		if err != nil {
			return fmt.Errorf("--config-webhook-secret-file: %w", err)
		}
		f.webhookSecret = []byte(secret)
	}
	if f.projectsRepo != "" {
		_, err := f.list()
		return err
	}
	if f.projectsFile != "" {
		var err error
		if f.projects, err = config.ReadProjectsFile(f.projectsFile); err != nil {
			return fmt.Errorf("--projects-file: %w", err)
		}
	}
	_, err := f.sources("")
	return err
}

// refresher is the refresher of what the flags name: dir when no repo is,
// and the list in --projects-repo, read again at every pass, when that is
// given.
func (f *repoFlags) refresher(dir string, eng *engine.Engine, st store.Store, opts config.RefresherOptions) (*config.Refresher, error) {
	if f.projectsRepo != "" {
		list, err := f.list()
		if err != nil {
			return nil, err
		}
		return config.NewListRefresher(list, eng, st, opts), nil
	}
	sources, err := f.sources(dir)
	if err != nil {
		return nil, err
	}
	return config.NewSourceRefresher(sources, eng, st, opts), nil
}

// list is the projects list in --projects-repo; it is read with the
// config repos' credentials and bounds.
func (f *repoFlags) list() (*config.ProjectList, error) {
	each := config.GitOptions{Ref: f.ref, Auth: f.auth, MaxBytes: f.maxBytes, Timeout: f.timeout, Link: f.link}
	in := each
	in.URL, in.Ref, in.File, in.Link = f.projectsRepo, f.projectsRef, f.projectsFile, ""
	l, err := config.NewProjectList(in, each)
	if err != nil {
		return nil, fmt.Errorf("--projects-repo, --projects-file: %w", err)
	}
	return l, nil
}

// sources are the config sources the flags name: dir when no repo is.
func (f *repoFlags) sources(dir string) ([]config.Source, error) {
	if !f.enabled() {
		return []config.Source{config.DirSource(dir)}, nil
	}
	opts := config.GitOptions{URL: f.repo, Ref: f.ref, Path: strings.TrimSuffix(f.path, "/"), Auth: f.auth, MaxBytes: f.maxBytes, Timeout: f.timeout, Link: f.link}
	if f.repo != "" {
		s, err := config.NewGitSource(opts)
		if err != nil {
			return nil, fmt.Errorf("--config-repo: %w", err)
		}
		return []config.Source{s}, nil
	}
	var out []config.Source
	for _, p := range f.projects {
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
