package main

import (
	"flag"
	"fmt"

	"github.com/sundial-cron/sundial/server"
	"github.com/sundial-cron/sundial/web/signin"
)

// signInFlags registers serve's sign-in flags on fs: how people (OIDC,
// IAP) and machines (service accounts' ID tokens, static tokens, the
// deprecated admin token) prove who they are. None set is the local
// single-user mode.
func signInFlags(fs *flag.FlagSet, s *signin.Settings) {
	fs.StringVar(&s.OIDCIssuer, "oidc-issuer", s.OIDCIssuer, "sign people in with this OpenID Connect issuer (https://accounts.google.com); the callback is --public-url + "+signin.CallbackPath)
	fs.StringVar(&s.OIDCClientID, "oidc-client-id", s.OIDCClientID, "the OAuth client id registered with --oidc-issuer")
	fs.StringVar(&s.OIDCClientSecretFile, "oidc-client-secret-file", s.OIDCClientSecretFile, "a file holding the OAuth client's secret")
	fs.StringVar(&s.CookieKeyFile, "cookie-key-file", s.CookieKeyFile, "a file of session cookie keys, one a line, 32 random bytes in base64 each; the first seals (head -c 32 /dev/urandom | base64)")
	fs.DurationVar(&s.SessionTTL, "session-ttl", s.SessionTTL, "how long a sign-in lasts, whatever is done with it")
	fs.BoolVar(&s.InsecureDevCookies, "insecure-dev-cookies", s.InsecureDevCookies, "session cookies without Secure, for development at http://localhost only")
	fs.StringVar(&s.IAPAudience, "iap-audience", s.IAPAudience, "behind Identity-Aware Proxy: the audience of its signed header (/projects/NUMBER/apps/ID, ...)")
	fs.StringVar(&s.IDTokenAudience, "id-token-audience", s.IDTokenAudience, "take Google-signed ID tokens of service accounts for this audience as bearer tokens (by convention --public-url)")
	fs.StringVar(&s.StaticTokensFile, "static-tokens-file", s.StaticTokensFile, "a file mapping SHA-256 hashes of static bearer tokens to identities (sundial token new)")
	fs.StringVar(&s.AdminTokenFile, "admin-token-file", s.AdminTokenFile, "deprecated: a file holding a token that makes its bearer an administrator (audited as serviceAccount:admin-token@sundial.invalid)")
}

// configFlags registers the flags of where the projects' configs come
// from on fs.
func configFlags(fs *flag.FlagSet, c *server.ConfigSource) {
	fs.StringVar(&c.Dir, "config-dir", c.Dir, "the directory of project configs, one <project>.yaml each")
	fs.DurationVar(&c.Refresh, "config-refresh", c.Refresh, "how often the config directory or repos are read again, give or take a tenth (SIGHUP reads them at once)")
	fs.StringVar(&c.Repo, "config-repo", c.Repo, "the config repo (https://, ssh:// or file:// URL) whose <config-path>/<project>.yaml files are the projects; replaces --config-dir (default $SUNDIAL_CONFIG_REPO)")
	fs.StringVar(&c.Ref, "config-ref", c.Ref, "the branch (or refs/tags/...) of --config-repo and of --projects-file entries without a ref (default $SUNDIAL_CONFIG_REF, else main)")
	fs.StringVar(&c.Path, "config-path", c.Path, "the directory in --config-repo holding <project>.yaml files (default $SUNDIAL_CONFIG_PATH, else projects/)")
	fs.BoolVar(&c.GoogleAuth, "config-google-auth", c.GoogleAuth, "read the config repos with the server's Google credentials (Cloud Source Repositories, or Secure Source Manager over https); default $SUNDIAL_CONFIG_GOOGLE_AUTH=true")
	fs.StringVar(&c.ProjectsFile, "projects-file", c.ProjectsFile, "a service config listing each project with its own repo, ref and path (docs/config.md); replaces --config-dir and --config-repo; with --projects-repo, its path in that repo")
	fs.StringVar(&c.ProjectsRepo, "projects-repo", c.ProjectsRepo, "the repo (https://, ssh:// or file:// URL) holding --projects-file, read again at every refresh")
	fs.StringVar(&c.ProjectsRef, "projects-ref", c.ProjectsRef, "the branch (or refs/tags/...) of --projects-repo (default main)")
	fs.StringVar(&c.TokenFile, "config-token-file", c.TokenFile, "a file holding the token (or password) that reads the config repos over https")
	fs.StringVar(&c.User, "config-user", c.User, "the user name sent with --config-token-file")
	fs.StringVar(&c.SSHKeyFile, "config-ssh-key-file", c.SSHKeyFile, "a file holding the private key that reads the config repos over ssh (host keys from ~/.ssh/known_hosts)")
	fs.StringVar(&c.Link, "config-link", c.Link, "(default $SUNDIAL_CONFIG_LINK) a link to a config file at a commit, naming {commit} and {path}, e.g. https://github.com/ORG/REPO/blob/{commit}/{path}")
	fs.Int64Var(&c.MaxBytes, "config-max-bytes", c.MaxBytes, "the most one read of a config repo may take: over https every byte the remote sends (ref listing and pack), and the sizes the pack's objects inflate to; more is refused (docs/config.md)")
	fs.DurationVar(&c.FetchTimeout, "config-fetch-timeout", c.FetchTimeout, "how long one ls-remote and fetch of a config repo may take")
	fs.BoolVar(&c.Moved, "config-moved", c.Moved, "the configs moved here on purpose: take over a database whose projects another config source defined (every server reading the old source must have stopped)")
	fs.StringVar(&c.Calendars, "calendars", c.Calendars, "a directory of .ics files (each a calendar named by its file) or a YAML file with a calendars: list, which every project's jobs may name in skip_calendars and only_calendars; checked at start, and read again at every refresh, where an invalid change keeps the last good ones (docs/config.md)")
	fs.StringVar(&c.WebhookSecretFile, "config-webhook-secret-file", c.WebhookSecretFile, "a file holding the secret push webhooks sign POST /api/v1/configs:reimport with (GitHub's X-Hub-Signature-256, GitLab's X-Gitlab-Token)")
}

// checkConfigFlags refuses flags of the config repos given without a
// repo, which would do nothing, and drops the default directory when the
// configs come from repos; given are the flags given.
func checkConfigFlags(given map[string]bool, c *server.ConfigSource) error {
	if !c.FromRepos() {
		for _, name := range []string{"config-ref", "config-path", "config-token-file", "config-ssh-key-file", "config-google-auth", "config-link", "config-webhook-secret-file"} {
			if given[name] {
				return fmt.Errorf("--%s: only with --config-repo or --projects-file", name)
			}
		}
		return nil
	}
	if !given["config-dir"] {
		c.Dir = ""
	}
	return nil
}

// cloudFlags registers the cloud shape's flags on fs.
func cloudFlags(fs *flag.FlagSet, c *server.Cloud) {
	gcpProjectFlag(fs, &c.Project, "cloud: the Google Cloud project (default $GOOGLE_CLOUD_PROJECT)")
	fs.StringVar(&c.Platform, "platform", c.Platform, "cloud: appengine or cloudrun (default: the one the environment says)")
	fs.StringVar(&c.Queue, "tasks-queue", c.Queue, "cloud: the Cloud Tasks queue (default $SUNDIAL_TASKS_QUEUE)")
	fs.StringVar(&c.Location, "tasks-location", c.Location, "cloud: the queue's region (default $SUNDIAL_TASKS_LOCATION)")
	fs.StringVar(&c.PublicURL, "public-url", c.PublicURL, "the server's URL as callers reach it (default $SUNDIAL_URL): the base of the sign-in callback; cloudrun: what tasks and tokens are for")
	fs.StringVar(&c.Invoker, "invoker", c.Invoker, "cloud, cloudrun: the service account Cloud Tasks and Cloud Scheduler sign as (default $SUNDIAL_INVOKER)")
	fs.StringVar(&c.Namespace, "namespace", c.Namespace, "cloud: the Datastore namespace (default $SUNDIAL_NAMESPACE)")
	fs.StringVar(&c.TasksEndpoint, "tasks-endpoint", c.TasksEndpoint, "cloud: host:port of a Cloud Tasks stand-in, spoken to without TLS or credentials (local runs only)")
}
