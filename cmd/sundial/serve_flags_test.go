package main

import (
	"io"
	"strings"
	"testing"
)

// Bad settings are refused before anything starts, each with the flag it
// is about; the cloud shape takes its settings from the environment the
// platform gives it.
func TestServeFlags(t *testing.T) {
	cloud := []string{"--backend", "cloud", "--project", "p", "--tasks-location", "us-central1", "--platform", "appengine"}
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string
		check   func(t *testing.T, f serveFlags)
	}{
		{name: "the embedded default needs nothing", check: func(t *testing.T, f serveFlags) {
			if f.backend != "embedded" || f.db != "sundial.db" || f.listen != "127.0.0.1:8080" || !f.commands {
				t.Errorf("defaults: %+v", f)
			}
		}},
		{name: "an unknown backend", args: []string{"--backend", "k8s"}, wantErr: `--backend "k8s"`},
		{name: "an unknown sync mode", args: []string{"--sync", "off"}, wantErr: `--sync "off"`},
		{name: "a stray argument", args: []string{"now"}, wantErr: `unexpected argument "now"`},
		{name: "a negative stop grace", args: []string{"--stop-grace", "-1s"}, wantErr: "--stop-grace"},
		{name: "no connections", args: []string{"--max-connections", "0"}, wantErr: "--max-connections"},
		{name: "the cloud shape without its project", args: []string{"--backend", "cloud", "--platform", "appengine", "--tasks-location", "l"}, wantErr: "--backend=cloud needs --project"},
		{name: "the cloud shape outside any platform", args: []string{"--backend", "cloud", "--project", "p", "--tasks-location", "l"}, wantErr: "--platform"},
		{name: "Cloud Run without its URL and invoker", args: append(cloud, "--platform", "cloudrun"), wantErr: "--public-url, --invoker"},
		{name: "commands asked of the cloud shape", args: append(cloud, "--commands"), wantErr: "never runs commands"},
		{name: "the cloud shape leaves commands off", args: cloud, check: func(t *testing.T, f serveFlags) {
			if f.commands {
				t.Error("commands are on in the cloud shape")
			}
		}},
		{
			name: "the cloud shape from App Engine's environment",
			args: []string{"--backend", "cloud"},
			env:  map[string]string{"GAE_ENV": "standard", "GOOGLE_CLOUD_PROJECT": "acme", "SUNDIAL_TASKS_LOCATION": "us-central1", "PORT": "8081"},
			check: func(t *testing.T, f serveFlags) {
				if f.cloud.platform != "appengine" || f.cloud.project != "acme" || f.listen != ":8081" ||
					f.cloud.queueName() != "projects/acme/locations/us-central1/queues/sundial-tasks" {
					t.Errorf("from the environment: %+v, queue %s", f, f.cloud.queueName())
				}
			},
		},
		{
			name: "Cloud Run's environment, and a URL's trailing slash",
			args: []string{"--backend", "cloud", "--public-url", "https://sundial.example/"},
			env:  map[string]string{"K_SERVICE": "sundial", "GOOGLE_CLOUD_PROJECT": "acme", "SUNDIAL_TASKS_LOCATION": "l", "SUNDIAL_INVOKER": "inv@acme.iam.gserviceaccount.com"},
			check: func(t *testing.T, f serveFlags) {
				if f.cloud.platform != "cloudrun" || f.cloud.publicURL != "https://sundial.example" {
					t.Errorf("from the environment: %+v", f.cloud)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"GAE_ENV", "K_SERVICE", "GOOGLE_CLOUD_PROJECT", "SUNDIAL_TASKS_LOCATION", "SUNDIAL_INVOKER", "SUNDIAL_URL", "PORT"} {
				t.Setenv(k, tc.env[k])
			}
			f, err := parseServeFlags(tc.args, io.Discard)
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
