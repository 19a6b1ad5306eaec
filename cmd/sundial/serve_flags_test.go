package main

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/server"
	"github.com/sundial-cron/sundial/slo"
	"github.com/sundial-cron/sundial/store/postgres"
	"github.com/sundial-cron/sundial/targets/pubsub"
)

// Bad settings are refused before anything starts, each with the flag it
// is about; the cloud shape takes its settings from the environment the
// platform gives it.
func TestServeFlags(t *testing.T) {
	shortSecretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(shortSecretFile, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cloud := []string{"--backend", "cloud", "--gcp-project", "p", "--tasks-location", "us-central1", "--platform", "appengine"}
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string
		check   func(t *testing.T, f server.Settings)
	}{
		{name: "the embedded default needs nothing", check: func(t *testing.T, f server.Settings) {
			if f.Shape != "embedded" || f.DB != "sundial.db" || f.Listen != "127.0.0.1:8080" || len(f.Commands.Projects) != 0 || f.Commands.User != "" {
				t.Errorf("defaults: %+v", f)
			}
		}},
		{name: "an unknown backend", args: []string{"--backend", "k8s"}, wantErr: `--backend "k8s"`},
		{name: "an unknown sync mode", args: []string{"--sync", "off"}, wantErr: `--sync "off"`},
		{name: "a stray argument", args: []string{"now"}, wantErr: `unexpected argument "now"`},
		{name: "a negative stop grace", args: []string{"--stop-grace", "-1s"}, wantErr: "--stop-grace"},
		{name: "launches committed further ahead than the engine takes them", args: []string{"--ahead", "2s"}, wantErr: "--ahead 2s: want 0 to 1s"},
		{name: "a negative ahead", args: []string{"--ahead", "-1s"}, wantErr: "--ahead -1s"},
		{name: "launches committed at their time", args: []string{"--ahead", "0"}, check: func(t *testing.T, f server.Settings) {
			if f.Ahead != 0 {
				t.Errorf("ahead = %v; want 0", f.Ahead)
			}
		}},
		{name: "no connections", args: []string{"--max-connections", "0"}, wantErr: "--max-connections"},
		{name: "a short webhook secret names its own flag", args: []string{"--config-repo", "file:///nowhere", "--config-webhook-secret-file", shortSecretFile}, wantErr: "--config-webhook-secret-file: " + shortSecretFile + ": the token has 5 bytes"},
		{name: "a zero retention count", args: []string{"--retention-count", "0"}, wantErr: "--retention-count"},
		{name: "a negative retention age of failures", args: []string{"--retention-failure-age", "-1h"}, wantErr: "--retention-failure-age"},
		{name: "retention flags set the defaults", args: []string{"--retention-age", "2h", "--retention-count", "50"}, check: func(t *testing.T, f server.Settings) {
			if f.Retention.Age != 2*time.Hour || f.Retention.Count != 50 || f.Retention.FailureAge != 90*24*time.Hour {
				t.Errorf("retention: %+v", f.Retention)
			}
		}},
		{name: "objective flags set the defaults", args: []string{"--slo-lateness", "1m", "--slo-success", "99.5%", "--slo-window", "28d"}, check: func(t *testing.T, f server.Settings) {
			if want := (slo.Objective{Lateness: time.Minute, Success: 0.995, Window: 28 * 24 * time.Hour}); f.Objective != want {
				t.Errorf("objective: %+v, want %+v", f.Objective, want)
			}
		}},
		{name: "no objective by default", check: func(t *testing.T, f server.Settings) {
			if f.Objective != (slo.Objective{}) {
				t.Errorf("objective: %+v, want none", f.Objective)
			}
		}},
		{name: "a success objective that is not a percentage", args: []string{"--slo-success", "0.99"}, wantErr: "slo-success"},
		{name: "an on-time share without a lateness", args: []string{"--slo-on-time", "95%"}, wantErr: "--slo-on-time: applies only with --slo-lateness"},
		{name: "an objective window too short", args: []string{"--slo-success", "99%", "--slo-window", "2h"}, wantErr: "--slo-window: 2h0m0s: want from 1d to 400d"},
		{name: "the cloud shape without its project", args: []string{"--backend", "cloud", "--platform", "appengine", "--tasks-location", "l"}, wantErr: "--backend=cloud needs --gcp-project"},
		{name: "the cloud shape outside any platform", args: []string{"--backend", "cloud", "--gcp-project", "p", "--tasks-location", "l"}, wantErr: "--platform"},
		{name: "Cloud Run without its URL and invoker", args: append(cloud, "--platform", "cloudrun"), wantErr: "--public-url, --invoker"},
		{name: "commands asked of the cloud shape", args: append(cloud, "--command-projects", "ops"), wantErr: "never runs commands"},
		{name: "a command user asked of the cloud shape", args: append(cloud, "--command-user", "nobody"), wantErr: "never runs commands"},
		{name: "the postgres shape without its database", args: []string{"--backend", "postgres"}, wantErr: "--backend postgres needs --database-url or $SUNDIAL_DATABASE_URL"},
		{name: "the postgres shape with too few connections", args: []string{"--backend", "postgres", "--database-url", "postgres://db/sundial", "--database-max-conns", "2"}, wantErr: "--database-max-conns: want at least 4"},
		{name: "the postgres shape", args: []string{"--backend", "postgres", "--database-url", "postgres://db/sundial", "--database-listen-url", "postgres://direct/sundial"}, check: func(t *testing.T, f server.Settings) {
			if f.Postgres.URL != "postgres://db/sundial" || f.Postgres.ListenURL != "postgres://direct/sundial" || f.Postgres.MaxConns != postgres.DefaultMaxConns {
				t.Errorf("Postgres = %+v; want the URLs given and the default connections", f.Postgres)
			}
		}},
		{name: "a command project that no project can be", args: []string{"--command-projects", "ops,Billing"}, wantErr: `--command-projects: "Billing" is not a project id`},
		{name: "command projects listed", args: []string{"--command-projects", "ops, web", "--command-projects", "db"}, check: func(t *testing.T, f server.Settings) {
			if strings.Join(f.Commands.Projects, ",") != "ops,web,db" {
				t.Errorf("commandProjects = %q; want ops, web, db", f.Commands.Projects)
			}
		}},
		{name: "a pubsub grant without its project", args: []string{"--pubsub-topics", "projects/acme/topics/invoices"}, wantErr: `--pubsub-topics: "projects/acme/topics/invoices": want PROJECT=TOPIC`},
		{name: "a pubsub grant of a topic's short name", args: []string{"--pubsub-topics", "billing=invoices"}, wantErr: `--pubsub-topics: "billing=invoices": pubsub: bad topic "invoices"`},
		{name: "a pubsub pattern over Pub/Sub projects", args: []string{"--pubsub-topics", "billing=projects/acme*"}, wantErr: `--pubsub-topics: "billing=projects/acme*": a pattern is projects/<project>/topics/`},
		{name: "a pubsub pattern with a * inside", args: []string{"--pubsub-topics", "billing=projects/acme/topics/*-invoices*"}, wantErr: `a pattern is projects/<project>/topics/`},
		{name: "a pubsub grant to no project id", args: []string{"--pubsub-topics", "Billing=projects/acme/topics/invoices"}, wantErr: `--pubsub-topics: "Billing" is not a project id`},
		{name: "a swarming grant without its realm", args: []string{"--swarming-realms", "billing"}, wantErr: `--swarming-realms: "billing": want PROJECT=REALM`},
		{name: "a swarming grant of a bare LUCI project", args: []string{"--swarming-realms", "billing=acme"}, wantErr: `--swarming-realms: "billing=acme": realm "acme": want <luci project>:<realm>`},
		{name: "a swarming grant to no project id", args: []string{"--swarming-realms", "Billing=acme:ci"}, wantErr: `--swarming-realms: "Billing" is not a project id`},
		{name: "an OIDC account for pushes without a push secret", args: []string{"--push-oidc-account", "pubsub@acme.iam.gserviceaccount.com", "--public-url", "https://sundial.example.com"}, wantErr: `--push-oidc-account: needs --push-secret-file`},
		{name: "a swarming topic without a push secret", args: []string{"--swarming-pubsub-topic", "projects/acme/topics/swarming"}, wantErr: `--swarming-pubsub-topic: the pushes need --push-secret-file`},
		{name: "pubsub grants listed", args: append(cloud, "--pubsub-topics", "billing=projects/acme/topics/invoices, ops=projects/acme/topics/ops-*", "--pubsub-topics", "web=projects/web/topics/*"), check: func(t *testing.T, f server.Settings) {
			want := []pubsub.TopicGrant{
				{Project: "billing", Topic: "projects/acme/topics/invoices"},
				{Project: "ops", Topic: "projects/acme/topics/ops-", Prefix: true},
				{Project: "web", Topic: "projects/web/topics/", Prefix: true},
			}
			if !slices.Equal(f.Egress.PubsubTopics, want) {
				t.Errorf("pubsubGrants = %+v; want %+v", f.Egress.PubsubTopics, want)
			}
		}},
		{name: "a config repo and a directory", args: []string{"--config-repo", "https://example.com/c.git", "--config-dir", "x"}, wantErr: "--config-dir: not with --config-repo"},
		{name: "a config repo and a projects file", args: []string{"--config-repo", "https://example.com/c.git", "--projects-file", "p.yaml"}, wantErr: "give one"},
		{name: "a projects repo without the list's path", args: []string{"--projects-repo", "https://example.com/list.git"}, wantErr: "--projects-repo: needs --projects-file"},
		{name: "a projects ref without its repo", args: []string{"--projects-file", "p.yaml", "--projects-ref", "stable"}, wantErr: "--projects-ref: only with --projects-repo"},
		{name: "a projects list outside its repo", args: []string{"--projects-repo", "https://example.com/list.git", "--projects-file", "../p.yaml"}, wantErr: `--projects-repo, --projects-file: file "../p.yaml"`},
		{name: "a projects list in a repo is read at refreshes, not at start", args: []string{"--projects-repo", "https://example.com/list.git", "--projects-file", "sundial/projects.yaml"}, check: func(t *testing.T, f server.Settings) {
			if !f.Configs.FromRepos() || f.Configs.ProjectsRepo == "" || f.Configs.Dir != "" {
				t.Errorf("projects list in a repo: %+v", f.Configs)
			}
		}},
		{name: "a config ref without a repo", args: []string{"--config-ref", "stable"}, wantErr: "--config-ref: only with --config-repo"},
		{name: "a config repo of an unknown protocol", args: []string{"--config-repo", "ftp://example.com/c"}, wantErr: "--config-repo: config repo"},
		{name: "a config link without {commit}", args: []string{"--config-repo", "https://example.com/c.git", "--config-link", "https://example.com/x"}, wantErr: "{commit}"},
		{name: "two kinds of repo credentials", args: []string{"--config-repo", "https://example.com/c.git", "--config-token-file", "t", "--config-ssh-key-file", "k"}, wantErr: "give one"},
		{name: "a missing webhook secret", args: []string{"--config-repo", "https://example.com/c.git", "--config-webhook-secret-file", "/nonexistent"}, wantErr: "--config-webhook-secret-file"},
		{
			name: "the config repo from the environment",
			env:  map[string]string{"SUNDIAL_CONFIG_REPO": "https://example.com/c.git", "SUNDIAL_CONFIG_PATH": "sundial/"},
			check: func(t *testing.T, f server.Settings) {
				if f.Configs.Repo != "https://example.com/c.git" || f.Configs.Path != "sundial/" || f.Configs.Ref != "main" || !f.Configs.FromRepos() {
					t.Errorf("from the environment: %+v", f.Configs)
				}
			},
		},
		{
			name: "the cloud shape from App Engine's environment",
			args: []string{"--backend", "cloud"},
			env:  map[string]string{"GAE_ENV": "standard", "GOOGLE_CLOUD_PROJECT": "acme", "SUNDIAL_TASKS_LOCATION": "us-central1", "PORT": "8081"},
			check: func(t *testing.T, f server.Settings) {
				if f.Cloud.Platform != "appengine" || f.Cloud.Project != "acme" || f.Listen != ":8081" ||
					f.Cloud.QueueName() != "projects/acme/locations/us-central1/queues/sundial-tasks" {
					t.Errorf("from the environment: %+v, queue %s", f, f.Cloud.QueueName())
				}
			},
		},
		{
			name: "Cloud Run's environment, and a URL's trailing slash",
			args: []string{"--backend", "cloud", "--public-url", "https://sundial.example/"},
			env:  map[string]string{"K_SERVICE": "sundial", "GOOGLE_CLOUD_PROJECT": "acme", "SUNDIAL_TASKS_LOCATION": "l", "SUNDIAL_INVOKER": "inv@acme.iam.gserviceaccount.com"},
			check: func(t *testing.T, f server.Settings) {
				if f.Cloud.Platform != "cloudrun" || f.Cloud.PublicURL != "https://sundial.example" {
					t.Errorf("from the environment: %+v", f.Cloud)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"GAE_ENV", "K_SERVICE", "GOOGLE_CLOUD_PROJECT", "SUNDIAL_TASKS_LOCATION", "SUNDIAL_INVOKER", "SUNDIAL_URL", "PORT", "SUNDIAL_CONFIG_REPO", "SUNDIAL_CONFIG_PATH"} {
				t.Setenv(k, tc.env[k])
			}
			f, err := parseServe(tc.args, io.Discard)
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v; want one saying %q", err, tc.wantErr)
			case tc.wantErr == "" && err != nil:
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, f)
			}
		})
	}
}

// The cloud shape started where the environment does not say it is on the
// platform --platform names warns at start, naming what is missing: off
// App Engine, the headers its internal endpoints trust can come from
// anyone.
func TestServeWarnsOffItsPlatform(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		warning string // "" for none
	}{
		{name: "App Engine named on a laptop", args: []string{"--platform", "appengine"},
			warning: "--platform=appengine, but this is not App Engine: GAE_APPLICATION, GAE_ENV, GAE_SERVICE not set; the task and cron endpoints admit any request"},
		{name: "App Engine named without its service", args: []string{"--platform", "appengine"}, env: map[string]string{"GAE_APPLICATION": "s~acme", "GAE_ENV": "standard"},
			warning: "GAE_SERVICE not set"},
		{name: "App Engine", args: []string{"--platform", "appengine"}, env: map[string]string{"GAE_APPLICATION": "s~acme", "GAE_ENV": "standard", "GAE_SERVICE": "default"}},
		{name: "Cloud Run named on a laptop", args: []string{"--platform", "cloudrun", "--public-url", "https://s.example", "--invoker", "i@acme.iam.gserviceaccount.com"},
			warning: "--platform=cloudrun, but this is not Cloud Run: K_SERVICE not set"},
		{name: "Cloud Run", args: []string{"--platform", "cloudrun", "--public-url", "https://s.example", "--invoker", "i@acme.iam.gserviceaccount.com"}, env: map[string]string{"K_SERVICE": "sundial"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"GAE_APPLICATION", "GAE_ENV", "GAE_SERVICE", "K_SERVICE"} {
				t.Setenv(k, tc.env[k])
			}
			// A token file that does not exist stops the start right after
			// the warning, before anything reaches for Google Cloud.
			args := append([]string{"--backend", "cloud", "--gcp-project", "p", "--tasks-location", "l", "--admin-token-file", t.TempDir() + "/none"}, tc.args...)
			var stderr strings.Builder
			if code := runServe(args, io.Discard, &stderr, time.Now); code != 1 {
				t.Fatalf("exit %d, want 1 (no token file); log:\n%s", code, stderr.String())
			}
			warned := strings.Contains(stderr.String(), "level=WARN")
			switch {
			case tc.warning == "" && warned:
				t.Errorf("a warning on the platform itself:\n%s", stderr.String())
			case tc.warning != "" && !strings.Contains(stderr.String(), tc.warning):
				t.Errorf("log:\n%s\nwant a warning saying %q", stderr.String(), tc.warning)
			}
		})
	}
}

// serve's flags default to the server's own defaults, which the lab's
// whole-server benchmark builds on too (cmd/sundial-lab's
// TestBenchServesWithServesDefaults): given no flag, serve runs
// server.Defaults.
func TestServeDefaultsAreTheServers(t *testing.T) {
	for _, name := range []string{"SUNDIAL_CONFIG_REPO", "SUNDIAL_CONFIG_REF", "SUNDIAL_CONFIG_PATH", "SUNDIAL_CONFIG_GOOGLE_AUTH", "SUNDIAL_CONFIG_LINK",
		"GOOGLE_CLOUD_PROJECT", "GAE_ENV", "K_SERVICE", "SUNDIAL_TASKS_QUEUE", "SUNDIAL_TASKS_LOCATION", "SUNDIAL_URL", "SUNDIAL_INVOKER", "SUNDIAL_NAMESPACE", "PORT",
		"SUNDIAL_DATABASE_URL", "SUNDIAL_DATABASE_LISTEN_URL"} {
		t.Setenv(name, "")
	}
	got, err := parseServe(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := server.Defaults(func(string) string { return "" })
	if err := want.Check(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("serve with no flag runs\n%+v\nwant the server's defaults\n%+v", got, want)
	}
}
